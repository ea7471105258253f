// Directories opened beneath a root one component at a time, never through a symlink
// (openat with O_NOFOLLOW at every component, as checkpoints/restore.cc does). A file tool
// writes relative to the descriptor of the directory it resolved: a directory swapped for a
// symlink between the path check and the write makes the write fail, never land outside the
// project or in a protected path. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "daemon/base/unique_fd.h"

namespace agent::daemon::tools {

// The directory holding the last component of `rel` (a relative path without "." or ".."
// components), opened from `root` (followed: the caller chose it) one component at a time
// without following symlinks; with `create`, missing directories are made with `dir_mode`
// (minus the umask). PermissionDenied naming the path for a component that is a symlink or
// not a directory; InvalidArgument for a `rel` that is empty, absolute or holds "..".
absl::StatusOr<UniqueFd> OpenParentBeneath(const std::string& root, std::string_view rel,
                                           bool create, mode_t dir_mode);

}  // namespace agent::daemon::tools
