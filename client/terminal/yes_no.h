// A person's answer to a "[y/N]" question: one reading for the commands that ask on the terminal
// (undo, trust, mcp approve) and the interactive dialogs that take the next line as the answer.
#pragma once

#include <string>

namespace agent::client {

// True for y or yes (any case, surrounding blanks ignored); anything else is no.
bool IsYes(const std::string& answer);

// Prints "<question> [y/N] " on stdout and reads one line of stdin: IsYes of it (no at EOF).
bool AskYes(const std::string& question);

}  // namespace agent::client
