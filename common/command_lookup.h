// How a stdio MCP server's command is found, shared by the daemon, which runs it, and
// `agent mcp add`, which checks it before writing it down. A name without a slash is looked
// up on absolute entries of a PATH only (never relative ones, which would mean the server's
// cwd: the repository); a command with a slash is used as written. Pure functions over the
// file system; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace agent {

// The first regular, executable `dir/command` for each absolute `dir` of `search_path`
// (':'-separated), or `command` itself when it has a slash. NotFound ("command not found:
// …") when there is none.
absl::StatusOr<std::string> FindCommandOnPath(const std::string& command,
                                              std::string_view search_path);

}  // namespace agent
