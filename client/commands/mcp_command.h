// `agent mcp …`: the user's MCP servers. `add NAME -- CMD ARGS…` and `add NAME --url URL` write
// "mcp_servers" in $XDG_CONFIG_HOME/agent/config.json (every other setting kept as it was),
// `rm NAME` removes one; the daemon reads the file again at the next model request; `add`
// refuses (exit 2) a command the daemon would not find. `ls` asks
// the daemon what runs for the project here (client/link/project_root.h: the project sessions
// started here use, so it works from a subdirectory): state, tools, last error and each
// definition; `approve NAME` lets a person approve a server the project's
// .agent/settings.json defines, after showing everything the approval covers (command, args,
// cwd, env; or URL and headers), and the approval covers exactly that (a terminal is
// required: an approval is a person's, never a script's).
#pragma once

#include <string>

#include "agent/v1/agent.grpc.pb.h"

namespace agent::client {

// argv[0] is "mcp". Returns the exit code.
int McpCommand(int argc, char** argv);

// The /mcp text: the servers of the project in `workdir` and their tools.
std::string McpServersText(agent::v1::AgentDaemon::Stub& stub, const std::string& workdir);
// The same text for a listing already made.
std::string McpServersText(const agent::v1::ListMcpServersResponse& list);

}  // namespace agent::client
