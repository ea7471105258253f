// The hooks that apply to a project now: the user's config.json `hooks` (a dotfile manager's
// symlink followed), then the project's .agent/settings.json `hooks` (opened without following
// a symlink: repository content) as far as a person trusted them (hook_trust.h). Asked for at
// each event; the files are read again when one changed (common/file_stamp.h), so an edit
// takes effect at the next event. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/hooks/hook_config.h"

namespace agent::daemon::hooks {

// How many times Stop hooks may send the model back in one turn, unless config.json's
// `hooks_stop_limit` says otherwise.
inline constexpr int kDefaultStopLimit = 3;

struct HookSet {
  std::vector<HookCommand> commands;   // the ones that run
  std::vector<HookCommand> untrusted;  // the project's hooks nobody trusted (not run)
  // Files whose hooks cannot be read; a guard event then fails closed (asks a person).
  std::vector<std::string> problems;
  int stop_limit = kDefaultStopLimit;
};

struct HookFiles {
  std::string user_config;  // ConfigDir()/config.json
  std::string project;      // the project's directory (canonical)
  std::string trust_store;  // TrustedHooksPath()
};

// The daemon's files for `project`.
HookFiles DefaultHookFiles(const std::string& project);

HookSet LoadHooks(const HookFiles& files);

// The project's hooks as the session would read them, trusted or not (for `agent trust`);
// InvalidArgument / PermissionDenied when the file cannot be used.
absl::StatusOr<std::vector<HookCommand>> ProjectHooks(const std::string& project);

}  // namespace agent::daemon::hooks
