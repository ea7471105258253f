#include "common/append_only_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/dir_fd.h"
#include "common/reaction_scope.h"
#include "common/status_macros.h"

namespace agent {

absl::Status AppendOnlyFile::Append(std::string_view content, const std::string& path,
                                    absl::FunctionRef<absl::StatusOr<int>()> open) {
  CheckNotInReaction("append to", path);
  struct stat st;
  // Renamed over or removed since the last append: its old inode has no name left.
  if (fd_ >= 0 && (::fstat(fd_, &st) != 0 || st.st_nlink == 0)) Close();
  if (fd_ < 0) {
    ASSIGN_OR_RETURN(fd_, open());
  }
  absl::Status s;
  for (std::string_view left = content; s.ok() && !left.empty();) {
    const ssize_t n = ::write(fd_, left.data(), left.size());
    if (n >= 0) {
      left.remove_prefix(static_cast<size_t>(n));
    } else if (errno != EINTR) {
      s = FileErrorStatus(errno, "write", path);
    }
  }
  if (s.ok() && ::fsync(fd_) != 0) s = FileErrorStatus(errno, "fsync", path);
  if (!s.ok()) Close();  // the next append starts from a fresh open
  return s;
}

void AppendOnlyFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace agent
