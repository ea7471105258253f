#include "client/text/policy_mode.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/text/session_table.h"

namespace agent::client {

namespace v1 = agent::v1;

std::string PolicyModeName(v1::PolicyMode mode) {
  switch (mode) {
    case v1::POLICY_MODE_YES:
      return "yes";
    case v1::POLICY_MODE_AUTO:
      return "auto";
    case v1::POLICY_MODE_ACCEPT_EDITS:
      return "edits";
    case v1::POLICY_MODE_READ_ONLY:
      return "read-only";
    case v1::POLICY_MODE_PLAN:
      return "plan";
    case v1::POLICY_MODE_DENY_UNRULED:
      return "deny-unruled";
    default:
      return "ask";
  }
}

std::optional<v1::PolicyMode> ParsePolicyMode(const std::string& name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "ask") return v1::POLICY_MODE_ASK;
  if (n == "yes") return v1::POLICY_MODE_YES;
  if (n == "auto") return v1::POLICY_MODE_AUTO;
  if (n == "edits" || n == "accept-edits") return v1::POLICY_MODE_ACCEPT_EDITS;
  if (n == "read-only") return v1::POLICY_MODE_READ_ONLY;
  if (n == "plan") return v1::POLICY_MODE_PLAN;
  return std::nullopt;
}

v1::PolicyMode ModeFromFlags(const ModeFlags& f, v1::PolicyMode otherwise) {
  if (f.read_only) return v1::POLICY_MODE_READ_ONLY;
  if (f.plan) return v1::POLICY_MODE_PLAN;
  if (f.auto_mode) return v1::POLICY_MODE_AUTO;
  if (f.accept_edits) return v1::POLICY_MODE_ACCEPT_EDITS;
  if (f.yes) return v1::POLICY_MODE_YES;
  return otherwise;
}

std::string PolicyChangedLine(v1::PolicyMode mode, const std::string& client) {
  return absl::StrCat("mode: ", PolicyModeName(mode),
                      client.empty() ? "" : absl::StrCat(" (set by ", PrintableLine(client), ")"));
}

}  // namespace agent::client
