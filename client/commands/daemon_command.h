// `agent daemon status|stop`: the daemon's own state, and stopping it. A stop that would
// cancel running turns names their sessions first and asks (a terminal) or needs `force`.
// Not thread-safe (reads the terminal).
#pragma once

#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"

namespace agent::client {

// Runs `agent daemon <what>` ("status" or "stop"); returns the exit code.
int DaemonCommand(const std::string& what, bool force);

// What `agent daemon stop` says before cancelling the turns of `running` (sessions whose
// turn runs or waits for an approval): one line per session, its id, state, title and
// project. Pure.
std::string RunningTurnsText(const std::vector<agent::v1::Session>& running);

}  // namespace agent::client
