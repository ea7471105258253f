// File reads and writes as the tools need them: reads refuse what is not a regular file (a
// fifo would block the tool forever) and what is too big; writes replace the file atomically
// and keep its permissions. Thread-compatible functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace agent::daemon::tools {

// The largest file read_file, edit_file and the change check load whole.
inline constexpr uint64_t kMaxTextFileBytes = 32ull << 20;
// How much of the start of a file is looked at for NUL bytes.
inline constexpr size_t kBinarySniffBytes = 8192;

// Reads all of `abs_path`. `display` names it in messages. Errors: kNotFound;
// kFailedPrecondition for a directory or a non-regular file; kResourceExhausted when it is
// larger than `max_bytes`; kPermissionDenied / kInternal from the OS.
absl::StatusOr<std::string> ReadRegularFile(const std::string& abs_path, uint64_t max_bytes,
                                            std::string_view display);

// True when the first kBinarySniffBytes hold a NUL byte (what git and grep go by).
bool LooksBinary(std::string_view content);

// Replaces `abs_path` (a resolved path inside `root`) with `content`: temp file in the same
// directory, then rename, so readers see the old or the new file, never half of one. The
// directories are opened from `root` without following symlinks (beneath.h), so a directory
// swapped for a symlink since `abs_path` was resolved fails the write (kPermissionDenied)
// instead of redirecting it. An existing file's mode is kept; a new file gets 0666 minus the
// umask. Missing parent directories are created (0777 minus the umask). kPermissionDenied for
// an existing file we may not write (the rename would bypass that).
absl::Status ReplaceFileContent(const std::string& root, const std::string& abs_path,
                                std::string_view content);

// Splits into lines the way tools count them: "a\nb" and "a\nb\n" both have two lines.
size_t CountLines(std::string_view text);

}  // namespace agent::daemon::tools
