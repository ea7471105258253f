// `agent ls|attach|resume|fork|rm|daemon ...`: parsing and running the subcommands. Not
// thread-safe (may exit the process).
#pragma once

#include <string>

namespace agent::client {

// True when `word` (the first argument) names a subcommand RunSubcommand runs (not `mcp`,
// which McpCommand runs).
bool IsSubcommand(const std::string& word);

// "Subcommands:" and one line for each, `mcp` included, for `agent --help`.
std::string SubcommandsHelp();

// Runs argv[1] with its arguments; returns (or exits with) the exit code.
int RunSubcommand(int argc, char** argv);

}  // namespace agent::client
