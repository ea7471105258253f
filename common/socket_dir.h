// The directory of agentd's socket, as both programs check it (DESIGN.md "Trust boundaries"):
// the API key travels over that socket, so nobody else may be able to place or replace it. The
// directory must be a real directory (not a symlink) owned by us and not writable by group or
// others. Neither program ever changes the mode of a directory it did not create: AGENT_SOCKET
// may name a file in $HOME or a project, whose mode is the user's. Errors are one line naming
// the path and the owner. Pure functions of the filesystem; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace agent {

// PermissionDenied unless `dir` (lstat, no symlink followed) is a directory owned by this
// process's uid with no group/other write bit; NotFound when it does not exist.
absl::Status CheckSocketDir(const std::string& dir);

// Creates `dir` with mode 0700 when missing (its parents too), then CheckSocketDir. A directory
// that exists with the wrong owner or mode is refused, never fixed.
absl::Status EnsureSocketDir(const std::string& dir);

// "65534 (nobody)": a uid with its user name when there is one.
std::string UidName(unsigned uid);

}  // namespace agent
