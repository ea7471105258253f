#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace agent {
namespace {

absl::Status ErrnoStatus(std::string_view what, const std::string& path) {
  int e = errno;
  std::string msg = absl::StrCat(std::string(what), " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(msg);
  if (e == ENOSPC || e == EDQUOT) return absl::ResourceExhaustedError(msg);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(msg);
  return absl::InternalError(msg);
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

absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 Durability durability) {
  const bool sync = durability == Durability::kSynced;
  std::filesystem::path p(path);
  std::string dir = p.parent_path().string();
  std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), kFlags, 0600);
  if (fd < 0 && errno == ENOENT) {  // the directory is missing only the first time
    if (auto s = MakeDirs(dir); !s.ok()) return s;
    fd = ::open(tmp.c_str(), kFlags, 0600);
  }
  if (fd < 0) return ErrnoStatus("create", tmp);
  absl::Status s = WriteAll(fd, content, tmp);
  if (s.ok() && sync && ::fsync(fd) != 0) s = ErrnoStatus("fsync", tmp);
  if (::close(fd) != 0 && s.ok()) s = ErrnoStatus("close", tmp);
  // Replacing a file leaves its directory entry in place: after a power loss the directory
  // holds the old or the new file, both whole. Only a new name needs the directory synced.
  struct stat st;
  const bool replacing = ::stat(path.c_str(), &st) == 0;
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = ErrnoStatus("rename", path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (!sync || replacing) return absl::OkStatus();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

absl::Status AppendToFile(const std::string& path, std::string_view content) {
  std::filesystem::path p(path);
  if (auto s = MakeDirs(p.parent_path().string()); !s.ok()) return s;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("open", path);
  absl::Status s = WriteAll(fd, content, path);
  if (s.ok() && ::fsync(fd) != 0) s = ErrnoStatus("fsync", path);
  ::close(fd);
  return s;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path);
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

}  // namespace agent
