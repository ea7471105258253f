#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/reaction_scope.h"
#include "common/status_macros.h"

namespace agent {
namespace {

absl::Status ErrnoStatus(std::string_view what, const std::string& path) {
  return FileErrorStatus(errno, what, path);
}

absl::Status WriteAll(int fd, std::string_view content, const std::string& path) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path);
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Reads `fd` to its end and closes it.
absl::StatusOr<std::string> ReadAllAndClose(int fd, const std::string& path) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoStatus("read", path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status AppendAndClose(int fd, std::string_view content, const std::string& path) {
  absl::Status s = WriteAll(fd, content, path);
  if (s.ok() && ::fsync(fd) != 0) s = ErrnoStatus("fsync", path);
  ::close(fd);
  return s;
}

uint64_t RandomBits() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) == static_cast<ssize_t>(sizeof r)) return r;
  // getrandom cannot fail for 8 bytes once the pool is ready; O_EXCL keeps a weaker name safe.
  static std::atomic<uint64_t> counter{0};
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
         (static_cast<uint64_t>(::getpid()) << 32) ^ counter.fetch_add(0x9e3779b97f4a7c15);
}

// Creates a fresh temp file for `name` in `dir`; its name goes to `tmp`.
absl::StatusOr<int> CreateTempFile(const DirFd& dir, const std::string& name, std::string* tmp) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  for (int attempt = 0; attempt < 4; ++attempt) {  // EEXIST only on a name collision
    *tmp = TempFileName(name);
    const int fd = ::openat(dir.fd(), tmp->c_str(), kFlags, 0600);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;
  }
  return ErrnoStatus("create", dir.PathOf(*tmp));
}

absl::Status WriteAt(const DirFd& dir, const std::string& name, std::string_view content,
                     Durability durability, bool refuse_symlink) {
  RETURN_IF_ERROR(CheckFileName(name));
  CheckNotInReaction("write", dir.PathOf(name));
  const bool sync = durability == Durability::kSynced;
  // Replacing a file leaves its directory entry in place: after a power loss the directory
  // holds the old or the new file, both whole. Only a new name needs the directory synced.
  struct stat st;
  const bool replacing = ::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (replacing && refuse_symlink && S_ISLNK(st.st_mode)) {
    return absl::PermissionDeniedError(
        absl::StrCat(dir.PathOf(name), " is a symbolic link, which is not followed"));
  }
  std::string tmp;
  ASSIGN_OR_RETURN(const int fd, CreateTempFile(dir, name, &tmp));
  absl::Status s = WriteAll(fd, content, dir.PathOf(tmp));
  if (s.ok() && sync && ::fsync(fd) != 0) s = ErrnoStatus("fsync", dir.PathOf(tmp));
  if (::close(fd) != 0 && s.ok()) s = ErrnoStatus("close", dir.PathOf(tmp));
  if (s.ok() && ::renameat(dir.fd(), tmp.c_str(), dir.fd(), name.c_str()) != 0) {
    s = ErrnoStatus("rename", dir.PathOf(name));
  }
  if (!s.ok()) {
    ::unlinkat(dir.fd(), tmp.c_str(), 0);
    return s;
  }
  if (sync && !replacing) ::fsync(dir.fd());
  return absl::OkStatus();
}

}  // namespace

absl::Status MakeDirs(const std::string& path, int mode) {
  if (path.empty()) return absl::OkStatus();
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
      return ErrnoStatus("mkdir", partial);
    }
  }
  return absl::OkStatus();
}

std::string TempFileName(std::string_view name) {
  return absl::StrFormat("%s.tmp.%016x", std::string(name), RandomBits());
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 Durability durability) {
  const std::filesystem::path p(path);
  ASSIGN_OR_RETURN(DirFd dir, DirFd::Open(p.parent_path().string(), /*create=*/true));
  return WriteAt(dir, p.filename().string(), content, durability, /*refuse_symlink=*/false);
}

absl::Status WriteFileAtomically(const DirFd& dir, const std::string& name,
                                 std::string_view content, Durability durability) {
  return WriteAt(dir, name, content, durability, /*refuse_symlink=*/true);
}

absl::Status AppendToFile(const std::string& path, std::string_view content) {
  CheckNotInReaction("append to", path);
  std::filesystem::path p(path);
  RETURN_IF_ERROR(MakeDirs(p.parent_path().string()));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("open", path);
  return AppendAndClose(fd, content, path);
}

absl::Status AppendToFile(const DirFd& dir, const std::string& name, std::string_view content) {
  CheckNotInReaction("append to", dir.PathOf(name));
  ASSIGN_OR_RETURN(const int fd, dir.OpenFile(name, O_WRONLY | O_CREAT | O_APPEND));
  return AppendAndClose(fd, content, dir.PathOf(name));
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path);
  return ReadAllAndClose(fd, path);
}

absl::StatusOr<std::string> ReadFileToString(const DirFd& dir, const std::string& name) {
  ASSIGN_OR_RETURN(const int fd, dir.OpenFile(name, O_RDONLY));
  return ReadAllAndClose(fd, dir.PathOf(name));
}

}  // namespace agent
