#include "daemon/tools/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "daemon/tools/beneath.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {
namespace {

absl::Status ErrnoError(int err, std::string_view what, std::string_view name) {
  std::string msg = absl::StrCat(AbslView(what), " ", AbslView(name), ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(absl::StrCat(AbslView(name), " does not exist"));
    case ENOTDIR:
      return absl::FailedPreconditionError(
          absl::StrCat(AbslView(name), ": a parent in the path is not a directory"));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& abs_path, uint64_t max_bytes,
                                            std::string_view display) {
  // O_NONBLOCK: opening a fifo must not wait for a writer; fstat then refuses it.
  int fd = ::open(abs_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == EISDIR)
      return absl::FailedPreconditionError(absl::StrCat(AbslView(display), " is a directory"));
    return ErrnoError(err, "open", display);
  }
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, "stat", display);
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(AbslView(display), " is a directory"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(AbslView(display), " is not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(AbslView(display), " is ", st.st_size,
                                                     " bytes, over the limit of ", max_bytes));
  }
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  // A file growing while we read is cut at the limit rather than read forever.
  while (out.size() <= max_bytes) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read", display);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  if (out.size() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(AbslView(display), " is over the limit of ", max_bytes, " bytes"));
  }
  return out;
}

bool LooksBinary(std::string_view content) {
  return content.substr(0, kBinarySniffBytes).find('\0') != std::string_view::npos;
}

absl::Status ReplaceFileContent(const std::string& root, const std::string& abs_path,
                                std::string_view content) {
  static std::atomic<uint64_t> counter{0};
  char buf[PATH_MAX];
  if (::realpath(root.c_str(), buf) == nullptr) return ErrnoError(errno, "resolve", root);
  const std::string real_root = buf;
  const std::string prefix = real_root == "/" ? "/" : real_root + "/";
  if (abs_path.size() <= prefix.size() || abs_path.compare(0, prefix.size(), prefix) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(abs_path, " is outside ", real_root));
  }
  // Every directory from the root down is opened without following a symlink, and the file is
  // made and renamed relative to the last one: a swap after the path check cannot redirect it.
  const std::string rel = abs_path.substr(prefix.size());
  absl::StatusOr<UniqueFd> dir = OpenParentBeneath(real_root, rel, /*create=*/true, 0777);
  if (!dir.ok()) return dir.status();
  const std::string base = rel.substr(rel.rfind('/') + 1);

  struct stat st;
  bool existed = ::fstatat(dir->get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (existed && !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(abs_path, " is not a regular file"));
  }
  // The rename below would replace a read-only file regardless; respect the bit instead.
  if (existed && ::faccessat(dir->get(), base.c_str(), W_OK, AT_SYMLINK_NOFOLLOW) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(abs_path, " is read-only"));
  }
  const std::string tmp =
      absl::StrCat(".", base, ".agent-tmp.", ::getpid(), ".", counter.fetch_add(1));
  int fd =
      ::openat(dir->get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return ErrnoError(errno, "create", abs_path);
  absl::Status status;
  if (existed && ::fchmod(fd, st.st_mode & 07777) != 0) {
    status = ErrnoError(errno, "chmod", abs_path);
  }
  std::string_view rest = content;
  while (status.ok() && !rest.empty()) {
    ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = ErrnoError(errno, "write", abs_path);
      break;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (::close(fd) != 0 && status.ok()) status = ErrnoError(errno, "close", abs_path);
  if (status.ok() && ::renameat(dir->get(), tmp.c_str(), dir->get(), base.c_str()) != 0) {
    status = ErrnoError(errno, "rename", abs_path);
  }
  if (!status.ok()) ::unlinkat(dir->get(), tmp.c_str(), 0);
  return status;
}

size_t CountLines(std::string_view text) {
  if (text.empty()) return 0;
  size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? n : n + 1;
}

}  // namespace agent::daemon::tools
