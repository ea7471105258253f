// Writes a file so that a crash at any moment leaves either the old or the new content:
// temp file beside it, write, fsync, rename (and an fsync of the directory when the name is
// new). Thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace agent {

enum class Durability {
  kSynced,    // fsync before the rename: survives a power loss
  kUnsynced,  // atomic against a crash of the process only (for files we can rebuild)
};

// Replaces `path` with `content`. Creates missing parent directories (0700). On failure
// (a full disk included) the old file is untouched and the temp file is removed.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 Durability durability = Durability::kSynced);

// Appends `content` to `path` and fsyncs (for append-only logs).
absl::Status AppendToFile(const std::string& path, std::string_view content);

// Reads a whole file; NotFound when it does not exist.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// mkdir -p with `mode` for the directories it creates.
absl::Status MakeDirs(const std::string& path, int mode = 0700);

}  // namespace agent
