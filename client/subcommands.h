// `agent ls|attach|resume|fork|rm|daemon ...`: parsing and running the subcommands. Not
// thread-safe (may exit the process).
#pragma once

#include <string>

namespace agent::client {

// True when `word` (the first argument) names a subcommand.
bool IsSubcommand(const std::string& word);

// Runs argv[1] with its arguments; returns (or exits with) the exit code.
int RunSubcommand(int argc, char** argv);

}  // namespace agent::client
