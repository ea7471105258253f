#include "daemon/service/peer_origin.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/person_answer.h"

namespace agent::daemon {
namespace {

// The parent of `pid` from /proc/PID/stat (the field after the command name, which may hold
// spaces and parentheses itself); -1 when it cannot be read.
pid_t ParentOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string stat = buf.str();
  const size_t close = stat.rfind(')');
  if (!in || close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long parent = -1;
  if (!(rest >> state >> parent)) return -1;
  return static_cast<pid_t>(parent);
}

}  // namespace

bool IsDescendantOf(pid_t pid, pid_t ancestor) {
  constexpr int kMaxDepth = 4096;  // deeper than any real process tree; bounds a cycle
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (pid <= 0) return true;  // unknown: fail closed
    if (pid == ancestor) return depth > 0;
    if (pid == 1) return false;
    pid = ParentOf(pid);
  }
  return true;
}

pid_t PeerPid(const grpc::CallbackServerContext& ctx) {
  // Connections are handed to gRPC by fd (Server::AcceptLoop), which names the peer "fd:N".
  const std::string peer = ctx.peer();
  int fd = -1;
  if (!absl::StartsWith(peer, "fd:") || !absl::SimpleAtoi(peer.substr(3), &fd) || fd < 0) {
    return 0;
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return 0;
  return cred.pid;
}

bool AnsweredByPerson(const grpc::CallbackServerContext& ctx) {
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find(kPersonAnswerKey);
  return it != metadata.end() && it->second == kPersonAnswerValue;
}

absl::Status RefuseToolProcess(const grpc::CallbackServerContext& ctx, std::string_view what) {
  const pid_t pid = PeerPid(ctx);
  if (!IsDescendantOf(pid, ::getpid())) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("refused: a program started by a tool (pid ", pid,
                                                  ") cannot ", std::string(what),
                                                  "; only a person's agent client can"));
}

}  // namespace agent::daemon
