#include "common/dir_fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"

namespace agent {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

absl::Status Refused(const std::string& path, std::string_view why) {
  return absl::PermissionDeniedError(absl::StrCat(path, " ", std::string(why)));
}

// Why openat(O_DIRECTORY|O_NOFOLLOW) of `name` failed with `e`, in words naming `path`.
absl::Status SubdirOpenError(int dir_fd, const std::string& name, const std::string& path, int e) {
  struct stat st;
  if ((e == ELOOP || e == ENOTDIR) &&
      ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return Refused(path, "is a symbolic link, which is not followed");
    return Refused(path, "is not a directory");
  }
  return FileErrorStatus(e, "open", path);
}

}  // namespace

absl::Status FileErrorStatus(int errno_value, std::string_view what, const std::string& path) {
  const std::string msg =
      absl::StrCat(std::string(what), " ", path, ": ",
                   errno_value == ELOOP ? "it is a symbolic link, which is not followed"
                                        : std::strerror(errno_value));
  switch (errno_value) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(msg);
    case EACCES:
    case EPERM:
    case ELOOP:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status CheckFileName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("not a file name: \"", std::string(name), "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<DirFd> DirFd::Open(const std::string& path, bool create) {
  const std::string p = path.empty() ? std::string(".") : path;
  int fd = ::open(p.c_str(), kDirFlags);
  if (fd < 0 && errno == ENOENT && create) {
    RETURN_IF_ERROR(MakeDirs(p, 0700));
    fd = ::open(p.c_str(), kDirFlags);
  }
  if (fd < 0) return FileErrorStatus(errno, "open", p);
  return DirFd(fd, p);
}

absl::StatusOr<DirFd> DirFd::OpenSubdir(const std::string& name, bool create) const {
  RETURN_IF_ERROR(CheckFileName(name));
  const std::string path = PathOf(name);
  if (create && ::mkdirat(fd_, name.c_str(), 0700) != 0 && errno != EEXIST) {
    return FileErrorStatus(errno, "mkdir", path);
  }
  const int fd = ::openat(fd_, name.c_str(), kDirFlags | O_NOFOLLOW);
  if (fd < 0) return SubdirOpenError(fd_, name, path, errno);
  DirFd dir(fd, path);
  struct stat st;
  if (::fstat(fd, &st) != 0) return FileErrorStatus(errno, "stat", path);
  // Another user's directory could be swapped or filled by them at any time.
  if (st.st_uid != ::geteuid()) {
    return Refused(path, absl::StrCat("belongs to another user (uid ", st.st_uid, ")"));
  }
  return dir;
}

absl::StatusOr<int> DirFd::OpenFile(const std::string& name, int flags, int mode) const {
  RETURN_IF_ERROR(CheckFileName(name));
  const int fd = ::openat(fd_, name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                          static_cast<mode_t>(mode));
  if (fd < 0) return FileErrorStatus(errno, "open", PathOf(name));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Refused(PathOf(name), "is not a regular file");
  }
  return fd;
}

std::string DirFd::PathOf(std::string_view name) const {
  return path_ == "/" ? "/" + std::string(name) : absl::StrCat(path_, "/", std::string(name));
}

DirFd::DirFd(DirFd&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

DirFd& DirFd::operator=(DirFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

DirFd::~DirFd() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::string> ReadBoundedFile(int fd, const std::string& path, size_t max_bytes) {
  struct stat st;
  std::string text;
  absl::Status status;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    status =
        absl::InvalidArgumentError(absl::StrCat(path, " is larger than ", max_bytes >> 10, " KiB"));
  } else {
    char buf[8192];
    ssize_t n;
    while (text.size() <= max_bytes && (n = ::read(fd, buf, sizeof buf)) > 0) {
      text.append(buf, static_cast<size_t>(n));
    }
    if (text.size() > max_bytes) {
      status = absl::InvalidArgumentError(absl::StrCat(path, " grew past the size limit"));
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return text;
}

std::vector<std::string> NamesWithSuffix(const DirFd& dir, std::string_view suffix) {
  std::vector<std::string> names;
  int fd = ::dup(dir.fd());
  if (fd < 0) return names;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return names;
  }
  ::rewinddir(d);  // the duplicate shares the directory's offset with `dir`
  // Bounded by the directory: each readdir returns a new entry or ends it.
  while (dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n.size() <= suffix.size() || n.substr(n.size() - suffix.size()) != suffix) continue;
    n.remove_suffix(suffix.size());
    names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace agent
