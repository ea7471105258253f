// Where the interactive view's Tab completion gets its lists: custom commands from the
// daemon (ListCommands; none when the daemon does not implement it), the project's files
// (project_files.h) kept for a few seconds so that Tab after Tab does not list them again.
// `stub` gives the daemon's stub at the time of the call (a reconnect replaces it). Not
// thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/v1/agent.grpc.pb.h"
#include "client/input/completion.h"

namespace agent::client {

// `workdir` is the project root; `session_cwd` (absolute, inside it; "" for the root) the
// directory the session was started in, from which `@path` resolves first.
CompletionSources DaemonCompletionSources(
    std::function<agent::v1::AgentDaemon::StubInterface&()> stub, const std::string& workdir,
    const std::string& session_cwd = "");

// The project's files (relative to the root) as `@path` completion offers them from
// `session_cwd`: the files under it relative to it, first, then every other file of the
// project relative to the root (a mention resolves from the session's directory, then the
// root: daemon/prompt/mentions.h). Pure.
std::vector<std::string> FilesFromDirectory(std::vector<std::string> root_relative,
                                            const std::string& workdir,
                                            const std::string& session_cwd);

}  // namespace agent::client
