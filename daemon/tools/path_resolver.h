// Keeps every path a tool touches inside the session's workdir. Resolution follows symlinks
// component by component, like realpath(3), but also works for paths that do not exist yet:
// the deepest existing ancestor is resolved and the rest is appended lexically. The result is
// refused when it lands outside the workdir, whether through `..`, an absolute path or a
// symlink anywhere along the way. Pure functions over the filesystem; thread-safe.
//
// Not a security boundary against a process racing us (a directory swapped for a symlink
// between resolution and open); it keeps the model's mistakes inside the project.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace agent::daemon::tools {

// Returns the absolute, symlink-free path that `path` names. Relative paths are taken from
// `workdir`; an empty path is the workdir itself. Errors:
//   kPermissionDenied  `path "../x" is outside the project (/abs/workdir)`
//   kInvalidArgument   NUL byte in the path, or a symlink loop
//   kFailedPrecondition the workdir itself cannot be resolved
absl::StatusOr<std::string> ResolveInside(const std::string& workdir, std::string_view path);

// `abs` relative to `workdir` for display ("." for the workdir itself); paths outside it
// are returned unchanged.
std::string RelativeToWorkdir(const std::string& workdir, const std::string& abs);

}  // namespace agent::daemon::tools
