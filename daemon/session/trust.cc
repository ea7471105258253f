// A session and the project's own allow rules: ignored until a person trusted them
// (policy/trusted_rules.h), never silently.
#include "common/paths.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/session/session.h"

namespace agent::daemon {

std::string Session::UntrustedRulesNotice() const {
  return policy::UntrustedRulesNotice(ProjectSettingsPath(workdir()), rules_->UntrustedRules());
}

}  // namespace agent::daemon
