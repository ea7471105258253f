#include "daemon/checkpoints/restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/dir_fd.h"
#include "daemon/base/unique_fd.h"

namespace agent::daemon::checkpoints {
namespace {

std::vector<std::string> Components(const std::string& path) { return absl::StrSplit(path, '/'); }

// The directory holding `path`'s last component, opened from `root` component by component
// (O_NOFOLLOW), made when missing and `create`.
absl::Status OpenParent(const std::string& root, const std::vector<std::string>& parts,
                        size_t depth, bool create, UniqueFd* out) {
  UniqueFd dir(::open(root.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
  if (dir.get() < 0) return FileErrorStatus(errno, "open", root);
  std::string walked = root;
  for (size_t i = 0; i < depth; ++i) {
    walked += "/" + parts[i];
    int fd = ::openat(dir.get(), parts[i].c_str(), O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
        return FileErrorStatus(errno, "create", walked);
      }
      fd = ::openat(dir.get(), parts[i].c_str(), O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return absl::PermissionDeniedError(
            absl::StrCat(walked, " is a symlink or not a directory: not restored through it"));
      }
      return FileErrorStatus(errno, "open", walked);
    }
    dir = UniqueFd(fd);
  }
  *out = std::move(dir);
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return FileErrorStatus(errno, "write", path);
    done += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

// Makes room for `name` in `dir`: an empty directory in the way goes (a non-empty one is an
// error from the rename that follows).
void ClearDirectory(int dir, const std::string& name) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    ::unlinkat(dir, name.c_str(), AT_REMOVEDIR);
  }
}

absl::Status WriteEntry(int dir, const std::string& name, const RestoreEntry& e,
                        const std::string& shown) {
  struct stat st;
  const bool exists = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  const bool exec = e.mode == "100755";
  if (e.mode_only && exists && S_ISREG(st.st_mode)) {
    mode_t m = st.st_mode & 07777 & ~0111;
    if (exec) m |= (m & 0444) >> 2;
    if (::fchmodat(dir, name.c_str(), m, 0) != 0) return FileErrorStatus(errno, "chmod", shown);
    return absl::OkStatus();
  }
  const std::string tmp = absl::StrCat(".", name.substr(0, 200), ".agent-restore-", ::getpid());
  ::unlinkat(dir, tmp.c_str(), 0);
  if (e.mode == "120000") {
    if (::symlinkat(e.content.c_str(), dir, tmp.c_str()) != 0) {
      return FileErrorStatus(errno, "create", shown);
    }
  } else {
    // The file's other permission bits stay as they are; a new file gets the umask's.
    mode_t m = exists && S_ISREG(st.st_mode) ? (st.st_mode & 0666) : 0666;
    if (exec) m |= (m & 0444) >> 2;
    UniqueFd fd(
        ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, m));
    if (fd.get() < 0) return FileErrorStatus(errno, "create", shown);
    absl::Status s = WriteAll(fd.get(), e.content, shown);
    if (s.ok() && exists && S_ISREG(st.st_mode) && ::fchmod(fd.get(), m) != 0) {
      s = FileErrorStatus(errno, "chmod", shown);
    }
    if (!s.ok()) {
      ::unlinkat(dir, tmp.c_str(), 0);
      return s;
    }
  }
  ClearDirectory(dir, name);
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
    absl::Status s = FileErrorStatus(errno, "replace", shown);
    ::unlinkat(dir, tmp.c_str(), 0);
    return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRestorePath(const std::string& path) {
  if (path.empty() || path[0] == '/') {
    return absl::InvalidArgumentError(absl::StrCat("not a relative path: \"", path, "\""));
  }
  std::vector<std::string> parts = Components(path);
  for (const std::string& p : parts) {
    if (p.empty() || p == "." || p == ".." || absl::EqualsIgnoreCase(p, ".git")) {
      return absl::InvalidArgumentError(absl::StrCat("refused path \"", path, "\""));
    }
  }
  if (parts.size() >= 2 && parts[0] == ".agent" && parts[1] == "sessions") {
    return absl::InvalidArgumentError(absl::StrCat("refused path \"", path, "\""));
  }
  return absl::OkStatus();
}

absl::Status RestoreOne(const std::string& root, const RestoreEntry& entry) {
  if (absl::Status s = CheckRestorePath(entry.path); !s.ok()) return s;
  std::vector<std::string> parts = Components(entry.path);
  const std::string shown = root + "/" + entry.path;
  const bool remove = entry.mode == "000000";
  if (!remove && entry.mode != "100644" && entry.mode != "100755" && entry.mode != "120000") {
    return absl::InvalidArgumentError(absl::StrCat(shown, ": mode ", entry.mode, " not restored"));
  }
  UniqueFd dir;
  absl::Status opened = OpenParent(root, parts, parts.size() - 1, /*create=*/!remove, &dir);
  if (remove && absl::IsNotFound(opened)) return absl::OkStatus();  // already gone
  if (!opened.ok()) return opened;
  if (!remove) return WriteEntry(dir.get(), parts.back(), entry, shown);
  if (::unlinkat(dir.get(), parts.back().c_str(), 0) != 0 && errno != ENOENT) {
    return FileErrorStatus(errno, "remove", shown);
  }
  // The directories the file leaves empty go too, deepest first; a non-empty one stays.
  for (size_t depth = parts.size() - 1; depth > 0; --depth) {
    UniqueFd parent;
    if (!OpenParent(root, parts, depth - 1, false, &parent).ok()) break;
    if (::unlinkat(parent.get(), parts[depth - 1].c_str(), AT_REMOVEDIR) != 0) break;
  }
  return absl::OkStatus();
}

}  // namespace agent::daemon::checkpoints
