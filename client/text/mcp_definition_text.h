// How `agent mcp ls` and `agent mcp approve` show an MCP server's definition
// (McpServer.definition): every part an approval covers, one per line. A project's
// definition is repository content and reaches the terminal, so every character that could
// act on it (controls, DEL, C1, bidirectional and invisible format characters) is shown as an
// escape instead. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "client/terminal/terminal_text.h"  // Visible

namespace agent::client {

// The definition's lines, without indent: "command: WORDS" (shell-quoted), "cwd: DIR",
// "env: NAME=value" per variable, or "url: URL" and "header: Name: value" per header. With
// `full` (the approval prompt) the cwd is always shown, resolved as the daemon resolves it,
// and an empty env is said so; otherwise only what the definition sets, and the values of
// variables and headers that look like credentials (KEY, TOKEN, SECRET, PASSWORD, auth,
// Cookie) as "(hidden)". Text that is not a
// definition gives one line saying so.
std::vector<std::string> DefinitionLines(std::string_view definition_json, bool full);

}  // namespace agent::client
