// DirFd: an open directory. Files in it are named relative to its descriptor (openat,
// renameat), so a path component swapped for a symlink after the open cannot redirect a
// write. Used for the repository's `.agent/`, whose content a cloned repository controls.
// Move-only; thread-compatible (the descriptor itself may be used from any thread).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace agent {

class DirFd {
 public:
  // Opens the directory `path`, following symlinks (the caller chose the path). With
  // `create`, a missing directory is made first (mkdir -p, 0700).
  static absl::StatusOr<DirFd> Open(const std::string& path, bool create);

  // Opens the subdirectory `name` (one path component) without following a symlink; with
  // `create` it is made (0700) when missing. PermissionDenied naming the path when it is a
  // symlink, not a directory, or owned by another uid; NotFound when missing.
  absl::StatusOr<DirFd> OpenSubdir(const std::string& name, bool create) const;

  // Opens the regular file `name` (one component) with `flags` plus O_NOFOLLOW, O_NONBLOCK
  // (a planted FIFO must not hang the open) and O_CLOEXEC; the caller closes the descriptor.
  // PermissionDenied naming the path for a symlink or anything but a regular file.
  absl::StatusOr<int> OpenFile(const std::string& name, int flags, int mode = 0600) const;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // path() + "/" + name, for messages.
  std::string PathOf(std::string_view name) const;

  DirFd(DirFd&& other) noexcept;
  DirFd& operator=(DirFd&& other) noexcept;
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;
  ~DirFd();

 private:
  DirFd(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// Reads the open file `fd` (closed here) whole: InvalidArgument naming `path` unless it is a
// regular file of at most `max_bytes`, also when it grows past that while being read.
absl::StatusOr<std::string> ReadBoundedFile(int fd, const std::string& path, size_t max_bytes);

// The names in `dir` that end in `suffix`, without it, sorted (`suffix` alone is no name).
std::vector<std::string> NamesWithSuffix(const DirFd& dir, std::string_view suffix);

// InvalidArgument unless `name` is one path component: not empty, ".", ".." or holding '/'.
absl::Status CheckFileName(std::string_view name);

// `errno_value` of the file operation `what` on `path` as a Status naming both:
// ENOENT NotFound, ENOSPC/EDQUOT ResourceExhausted, EACCES/EPERM/ELOOP PermissionDenied
// (ELOOP: a symlink met where none is followed), others Internal.
absl::Status FileErrorStatus(int errno_value, std::string_view what, const std::string& path);

}  // namespace agent
