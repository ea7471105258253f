// Which hooks of a project's own .agent/settings.json a person trusted. The file is
// repository content: a clone can ship a hook that runs anything, so a project hook runs only
// once a person trusted exactly it (its event, matcher, command and timeout: TrustKey) for
// that project, with `agent trust`. A changed hook is another key, so it is untrusted again.
// The user's own config.json hooks need no trust.
//
// The record lives outside every repository: $XDG_STATE_HOME/agent/trusted-hooks.json,
// `{"projects": {"/abs/project": {"identity": "<ProjectIdentity>", "hooks": ["<trust key>",
// ...]}}}`: bound, like trusted rules, to the directory as it was (policy::ProjectIdentity), so
// another clone at the same path trusts none of them. Writers are serialised by a process-wide
// lock; a store that does not parse trusts nothing. Thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon::hooks {

// StateDir()/trusted-hooks.json.
std::string TrustedHooksPath();

// The keys trusted for `project` in the store at `path`.
std::set<std::string> TrustedHookKeys(const std::string& path, const std::string& project);

// Adds `keys` for `project` (written atomically, 0600). Returns the keys newly recorded.
absl::StatusOr<std::vector<std::string>> TrustHooks(const std::string& path,
                                                    const std::string& project,
                                                    const std::vector<std::string>& keys);

// Forgets every hook trusted for `project`; returns how many were.
absl::StatusOr<int> RevokeHooks(const std::string& path, const std::string& project);

}  // namespace agent::daemon::hooks
