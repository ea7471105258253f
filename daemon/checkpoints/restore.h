// Writes files of a checkpoint back into the project, without ever leaving it: every path is
// checked (relative, no "." or ".." component, nothing under .git/ or .agent/sessions/), and
// walked from the project's root one directory at a time without following a symlink, so a
// symlinked directory (planted by a tool or in the repository) cannot redirect a write.
// Symlinks are restored as symlinks (their target is data, never followed). Stateless.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace agent::daemon::checkpoints {

struct RestoreEntry {
  std::string path;        // relative to the project
  std::string mode;        // git's: "100644", "100755", "120000"; "000000": remove the file
  std::string content;     // the file's bytes, or the symlink's target
  bool mode_only = false;  // only the exec bit differs: chmod the file, keep its bytes
};

// InvalidArgument unless `path` may be written by a restore.
absl::Status CheckRestorePath(const std::string& path);

// Applies one entry under `root`. Removing a file also removes the directories it leaves
// empty. PermissionDenied for a path through a symlink.
absl::Status RestoreOne(const std::string& root, const RestoreEntry& entry);

}  // namespace agent::daemon::checkpoints
