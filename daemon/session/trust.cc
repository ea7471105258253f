// A session and the project's own allow rules: ignored until a person trusted them
// (policy/trusted_rules.h), never silently.
#include "common/paths.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/session/session.h"

namespace agent::daemon {

std::string Session::UntrustedRulesNotice() const {
  return policy::UntrustedRulesNotice(ProjectSettingsPath(workdir_), rules_->UntrustedRules());
}

void Session::AnnounceUntrustedRulesLocked(std::vector<std::string> untrusted) {
  if (untrusted == untrusted_told_) return;
  untrusted_told_ = std::move(untrusted);
  if (untrusted_told_.empty()) return;
  NoticeLocked(policy::UntrustedRulesNotice(ProjectSettingsPath(workdir_), untrusted_told_));
}

}  // namespace agent::daemon
