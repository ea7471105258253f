// Where a person's own allow rules go: "allow always" and /allow record them in the user's
// state directory (PersonalRulesPath), bound to the project directory as trust is
// (trusted_rules.h: its path and identity, so another repository cloned at the same path
// inherits none), and never in the checkout: nothing under `.agent/` is created or changed, and
// a read-only checkout works. Rules an earlier version wrote to the project's
// .agent/settings.local.json keep working as far as they were trusted. Writers are serialised
// by the store's lock; the file is written atomically.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon::policy {

// StateDir()/personal-rules.json: {"projects": {"/abs/project": {"identity", "rules"}}}.
std::string PersonalRulesPath();

// <project>/.agent/settings.local.json: where an earlier version kept a person's rules (read,
// as far as trusted, never written).
std::string ProjectLocalSettingsPath(const std::string& project);

// Adds `rules` to the person's rules for `project` as it is now. Returns them as recorded
// (canonical form, in order, no repeats); InvalidArgument naming a rule that does not parse,
// and nothing recorded.
absl::StatusOr<std::vector<std::string>> RecordPersonalAllowRules(
    const std::string& project, const std::vector<std::string>& rules);

}  // namespace agent::daemon::policy
