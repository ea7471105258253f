// Where a stdio server's command is run from. A name without a slash is looked up on the
// daemon's own PATH, absolute entries only: never on the PATH the definition's "env" sets, and
// never relative to the server's cwd (the project), so a repository cannot ship a `python3`
// that runs instead of the one a person approved. A command with a slash is used as written
// (relative to the server's cwd): the path is part of what the person approves.
//
// Pure functions over the file system; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace agent::daemon::mcp {

// The daemon's PATH (or the usual system directories when it has none).
std::string DaemonSearchPath();

// The executable `command` names: `command` itself when it has a slash, else the first
// regular, executable `dir/command` for each absolute `dir` of `search_path` (':'-separated).
// NotFound ("command not found: …") when there is none.
absl::StatusOr<std::string> FindCommand(const std::string& command, std::string_view search_path);

}  // namespace agent::daemon::mcp
