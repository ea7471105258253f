// What an MCP server definition may be named and which URLs it may use, shared by the daemon
// (which rejects any other definition) and `agent mcp add` (which refuses to write one the
// daemon would reject). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace agent {

// The rule ValidMcpServerName checks, for messages.
inline constexpr std::string_view kMcpServerNameRule =
    "1-32 letters, digits, _ or - without \"__\" and not ending in _";

// 1-32 of [A-Za-z0-9_-], without "__" and not ending in "_" (either would blur the
// mcp__<server>__<tool> names: server "gh_" with tool "x" would read as server "gh").
bool ValidMcpServerName(std::string_view name);

// What two names that a person could take for one another share: the name in lower case
// without trailing "_" or "-" ("GH", "gh-" and "gh" share "gh"). Two servers seen by one
// session never share it (server_config.h refuses the second).
std::string McpServerNameKey(std::string_view name);

// An http:// or https:// URL (the Streamable HTTP transport speaks nothing else).
bool ValidMcpServerUrl(std::string_view url);

}  // namespace agent
