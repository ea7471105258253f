#include "client/policy_mode.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/session_table.h"

namespace agent::client {

namespace v1 = agent::v1;

std::string PolicyModeName(v1::PolicyMode mode) {
  switch (mode) {
    case v1::POLICY_MODE_YES:
      return "yes";
    case v1::POLICY_MODE_AUTO:
      return "auto";
    case v1::POLICY_MODE_READ_ONLY:
      return "read-only";
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
  if (n == "read-only") return v1::POLICY_MODE_READ_ONLY;
  return std::nullopt;
}

std::string PolicyChangedLine(v1::PolicyMode mode, const std::string& client) {
  return absl::StrCat("mode: ", PolicyModeName(mode),
                      client.empty() ? "" : absl::StrCat(" (set by ", PrintableLine(client), ")"));
}

}  // namespace agent::client
