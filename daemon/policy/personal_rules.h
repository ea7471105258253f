// Where a person's own allow rules go: "allow always" and /allow record them in the project's
// .agent/settings.local.json, which git ignores, never in the committable settings.json (that
// file is for rules a team chooses to share). Writers of one project are serialised by the
// caller (the session's policy lock); files are written atomically.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace agent::daemon::policy {

// <project>/.agent/settings.local.json: a person's own rules for the project, which git ignores.
std::string ProjectLocalSettingsPath(const std::string& project);

// Appends `rules` to ProjectLocalSettingsPath(project) (AppendAllowRules: parsed first, kept in
// the file's order, no repeats) and makes sure git ignores that file: `.agent/.gitignore` is
// created holding `/settings.local.json` when it is missing, and the line is added to one
// that lacks it.
absl::Status RecordPersonalAllowRules(const std::string& project,
                                      const std::vector<std::string>& rules);

}  // namespace agent::daemon::policy
