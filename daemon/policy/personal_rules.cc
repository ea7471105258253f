#include "daemon/policy/personal_rules.h"

#include "common/paths.h"
#include "daemon/policy/trusted_rules.h"

namespace agent::daemon::policy {

std::string PersonalRulesPath() { return StateDir() + "/personal-rules.json"; }

std::string ProjectLocalSettingsPath(const std::string& project) {
  return project + "/.agent/settings.local.json";
}

absl::StatusOr<std::vector<std::string>> RecordPersonalAllowRules(
    const std::string& project, const std::vector<std::string>& rules) {
  // The person's store has the trust store's shape and binding: the same writer serves both.
  return TrustRules(PersonalRulesPath(), project, rules);
}

}  // namespace agent::daemon::policy
