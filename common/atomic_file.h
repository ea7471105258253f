// Writes a file so that a crash at any moment leaves either the old or the new content:
// temp file beside it, write, fsync, rename (and an fsync of the directory when the name is
// new). The temp file has an unpredictable name and is created with O_EXCL|O_NOFOLLOW, so
// nothing planted beside the target is ever written through. The DirFd forms work relative
// to an open directory and follow no symlink at all (for `.agent/`, see common/dir_fd.h).
// Thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/dir_fd.h"

namespace agent {

enum class Durability {
  kSynced,    // fsync before the rename: survives a power loss
  kUnsynced,  // atomic against a crash of the process only (for files we can rebuild)
};

// Replaces `path` with `content`. Creates missing parent directories (0700). On failure
// (a full disk included) the old file is untouched and the temp file is removed. A symlink
// at `path` is replaced by the file, never written through.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 Durability durability = Durability::kSynced);

// The same for the file `name` (one component) in `dir`; a symlink at `name` is refused
// (PermissionDenied naming its path) and left as it is.
absl::Status WriteFileAtomically(const DirFd& dir, const std::string& name,
                                 std::string_view content,
                                 Durability durability = Durability::kSynced);

// The temp file's name for `name`: "<name>.tmp.<16 random hex digits>".
std::string TempFileName(std::string_view name);

// Appends `content` to `path` and fsyncs (for append-only logs). A symlink at `path` is not
// followed (PermissionDenied).
absl::Status AppendToFile(const std::string& path, std::string_view content);
// The same for the file `name` (one component) in `dir`, created 0600 when missing.
absl::Status AppendToFile(const DirFd& dir, const std::string& name, std::string_view content);

// Reads a whole file; NotFound when it does not exist.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// Reads the regular file `name` in `dir` without following a symlink (PermissionDenied
// naming the path for a symlink or anything but a regular file); NotFound when missing.
absl::StatusOr<std::string> ReadFileToString(const DirFd& dir, const std::string& name);

// mkdir -p with `mode` for the directories it creates.
absl::Status MakeDirs(const std::string& path, int mode = 0700);

}  // namespace agent
