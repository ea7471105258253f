// Where a project's sessions live: $XDG_STATE_HOME/agent/projects/<project key>/sessions/, in
// the user's state directory rather than the repository (DESIGN.md "On disk"), so a read-only
// checkout works and a repository can neither ship a session nor receive one. The key is the
// project's base name (readable) and 16 hex digits of the SHA-256 of its canonical path (two
// projects never share a directory). The directories are made 0700 and opened one by one
// below the state directory without following symlinks. Stateless; thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/dir_fd.h"

namespace agent::daemon {

// `workdir` is the canonical project path (common/paths ProjectDirectory), as in SessionMeta.
std::string ProjectKey(const std::string& workdir);
// StateDir()/projects/<key>/sessions
std::string ProjectSessionsDir(const std::string& workdir);
// StateDir()/projects/<key> opened, as below.
absl::StatusOr<DirFd> OpenProjectStateDir(const std::string& workdir, bool create);
// That directory opened; `create` makes the missing ones (0700). PermissionDenied naming the
// path for a symlink or a directory of another uid below the state directory; NotFound when
// missing and not `create`.
absl::StatusOr<DirFd> OpenProjectSessionsDir(const std::string& workdir, bool create);

}  // namespace agent::daemon
