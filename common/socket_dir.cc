#include "common/socket_dir.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"

namespace agent {

std::string UidName(unsigned uid) {
  passwd pw;
  passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    return absl::StrCat(uid, " (", found->pw_name, ")");
  }
  return absl::StrCat(uid);
}

absl::Status CheckSocketDir(const std::string& dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::NotFoundError(dir + " does not exist");
    return absl::PermissionDeniedError(
        absl::StrCat("cannot check the socket directory ", dir, ": ", std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) {
    return absl::PermissionDeniedError(absl::StrCat("refusing the socket directory ", dir,
                                                    ": it is a symlink (owner uid ",
                                                    UidName(st.st_uid), ")"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::PermissionDeniedError(
        absl::StrCat("refusing the socket directory ", dir, ": not a directory"));
  }
  if (st.st_uid != ::getuid()) {
    return absl::PermissionDeniedError(
        absl::StrCat("refusing the socket directory ", dir, ": owned by uid ", UidName(st.st_uid),
                     ", not by you (uid ", UidName(::getuid()), ")"));
  }
  if ((st.st_mode & 022) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "refusing the socket directory %s: mode %04o lets other users write in it (owner uid "
        "%s); use a directory of mode 0700",
        dir, st.st_mode & 07777, UidName(st.st_uid)));
  }
  return absl::OkStatus();
}

absl::Status EnsureSocketDir(const std::string& dir) {
  std::string parent = std::filesystem::path(dir).parent_path().string();
  // Parents made here get 0700 too; an existing parent (/tmp, /run/user/N) is left alone.
  if (!parent.empty()) {
    if (auto s = MakeDirs(parent, 0700); !s.ok()) return s;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the socket directory ", dir, ": ", std::strerror(errno)));
  }
  // mkdir's mode is cut by the umask, never widened: a new directory is at most 0700.
  return CheckSocketDir(dir);
}

}  // namespace agent
