#include "client/link/socket_trust.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/socket_dir.h"

namespace agent::client {

absl::Status CheckSocketPeer(int fd, const std::string& path) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot tell who serves ", path, ": ", std::strerror(errno)));
  }
  if (cred.uid != ::getuid() && cred.uid != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("refusing the server on ", path, ": it runs as uid ", UidName(cred.uid),
                     " (pid ", cred.pid, "), not as you (uid ", UidName(::getuid()), ") or root"));
  }
  return absl::OkStatus();
}

}  // namespace agent::client
