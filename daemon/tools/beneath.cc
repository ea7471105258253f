#include "daemon/tools/beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/dir_fd.h"

namespace agent::daemon::tools {

absl::StatusOr<UniqueFd> OpenParentBeneath(const std::string& root, std::string_view rel,
                                           bool create, mode_t dir_mode) {
  const std::string text(rel);
  if (text.empty() || text.front() == '/') {
    return absl::InvalidArgumentError(absl::StrCat("not a relative path: ", text));
  }
  const std::vector<std::string> parts = absl::StrSplit(text, '/');
  for (const std::string& p : parts) {
    if (p.empty() || p == "." || p == "..") {
      return absl::InvalidArgumentError(absl::StrCat("not a plain relative path: ", text));
    }
  }
  UniqueFd dir(::open(root.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
  if (dir.get() < 0) return FileErrorStatus(errno, "open", root);
  constexpr int kFlags = O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC;
  std::string walked = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& name = parts[i];
    absl::StrAppend(&walked, "/", name);
    int fd = ::openat(dir.get(), name.c_str(), kFlags);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir.get(), name.c_str(), dir_mode) != 0 && errno != EEXIST) {
        return FileErrorStatus(errno, "create", walked);
      }
      fd = ::openat(dir.get(), name.c_str(), kFlags);
    }
    if (fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return absl::PermissionDeniedError(absl::StrCat(
            walked, " is a symlink or not a directory (changed since the path was checked?)"));
      }
      return FileErrorStatus(errno, "open", walked);
    }
    dir = UniqueFd(fd);
  }
  return dir;
}

}  // namespace agent::daemon::tools
