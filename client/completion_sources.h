// Where the interactive view's Tab completion gets its lists: custom commands from the
// daemon (ListCommands; none when the daemon does not implement it), the project's files
// (project_files.h) kept for a few seconds so that Tab after Tab does not list them again.
// `stub` gives the daemon's stub at the time of the call (a reconnect replaces it). Not
// thread-safe.
#pragma once

#include <functional>
#include <string>

#include "agent/v1/agent.grpc.pb.h"
#include "client/completion.h"

namespace agent::client {

CompletionSources DaemonCompletionSources(
    std::function<agent::v1::AgentDaemon::StubInterface&()> stub, const std::string& workdir);

}  // namespace agent::client
