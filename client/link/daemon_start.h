// Starting agentd when no daemon answers: detached (its own session, not our child), with an
// environment built from an allow-list (provider keys and other secrets never reach the
// daemon or the tools it runs), reporting readiness through a pipe. Used by Connect under
// the <socket>.lock flock. Not thread-safe (forks).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace agent::client {

// Starts agentd on `socket_path` and waits (bounded) for its ready line. OK also when
// another client's daemon won the race; Unavailable with agentd's reason otherwise.
absl::Status StartDaemon(const std::string& socket_path);

// The daemon's environment from `env` ("NAME=value" entries): only what it needs (PATH,
// HOME, XDG_*, LANG/LC_*, TZ, USER/LOGNAME, SHELL, TMPDIR, AGENT_* settings, proxy and CA
// settings for the model connection), and never a variable whose name contains KEY, SECRET,
// TOKEN or PASSWORD in any case.
std::vector<std::string> DaemonEnvironment(const std::vector<std::string>& env);

}  // namespace agent::client
