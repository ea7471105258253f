#include "client/view/trust_dialog.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "client/commands/trust_command.h"
#include "client/terminal/yes_no.h"

namespace agent::client {
namespace {

CommandRunner::Outcome Say(std::string text) { return {std::move(text), "", false}; }

}  // namespace

CommandRunner::Outcome TrustDialog::Start(agent::v1::AgentDaemon::Stub& stub,
                                          const std::string& workdir, const Renderer& r) {
  shown_.clear();
  absl::StatusOr<agent::v1::TrustProjectRulesResponse> listed = CallTrust(stub, workdir, {}, false);
  if (!listed.ok()) return Say(r.ErrorLine(std::string(listed.status().message())));
  if (listed->untrusted().empty()) {
    return Say(r.Notice("every allow rule of this project's .agent/settings.json is trusted"));
  }
  workdir_ = workdir;
  shown_.assign(listed->untrusted().begin(), listed->untrusted().end());
  return Say(UntrustedRulesList(*listed) +
             r.Colored("1;33", "? trust these rules for this project? [y/N]") + "\n");
}

CommandRunner::Outcome TrustDialog::Answer(agent::v1::AgentDaemon::Stub& stub,
                                           const std::string& line, const Renderer& r) {
  std::vector<std::string> shown = std::exchange(shown_, {});
  if (!IsYes(line)) return Say(r.Notice("nothing trusted"));
  absl::StatusOr<agent::v1::TrustProjectRulesResponse> done =
      CallTrust(stub, workdir_, shown, false);
  if (!done.ok()) return Say(r.ErrorLine(std::string(done.status().message())));
  return Say(r.Notice(absl::StrCat("trusted ", done->changed_size(), " rule(s) for this project")));
}

}  // namespace agent::client
