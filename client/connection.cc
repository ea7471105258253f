#include "client/connection.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "common/protocol.h"
#include "grpcpp/create_channel_posix.h"
#include "grpcpp/grpcpp.h"

namespace agent::client {
namespace {

// How long a starting daemon may take to say it is ready.
constexpr int kStartTimeoutMs = 10000;

std::string AgentdPath() {
  // Prefer the agentd installed beside this agent, so a build tree uses its own daemon.
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path sibling = self.parent_path() / "agentd";
    if (::access(sibling.c_str(), X_OK) == 0) return sibling.string();
  }
  return "agentd";
}

// Starts agentd detached (its own session, not our child) and waits for its ready line.
absl::Status StartDaemon(const std::string& socket_path) {
  std::string log_dir = StateDir();
  if (auto s = EnsurePrivateDir(log_dir); !s.ok()) return s;
  std::string log_path = log_dir + "/agentd.log";
  std::string agentd = AgentdPath();
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  pid_t child = ::fork();
  if (child < 0) return absl::InternalError("fork failed");
  if (child == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    int devnull = ::open("/dev/null", O_RDONLY);
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    // The ready pipe is the one fd agentd inherits on purpose.
    int fd = ::dup(ready[1]);
    std::string fd_arg = std::to_string(fd);
    ::execlp(agentd.c_str(), agentd.c_str(), "--socket", socket_path.c_str(), "--ready-fd",
             fd_arg.c_str(), static_cast<char*>(nullptr));
    std::string msg = "error: cannot run " + agentd + ": " + std::strerror(errno) + "\n";
    ssize_t n = ::write(fd, msg.data(), msg.size());
    (void)n;
    ::_exit(127);
  }
  ::close(ready[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::string line;
  pollfd p{ready[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos) {
    int r = ::poll(&p, 1, kStartTimeoutMs);
    if (r <= 0) break;
    char buf[256];
    ssize_t n = ::read(ready[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(ready[0]);
  if (line.rfind("ok", 0) == 0) return absl::OkStatus();
  // "already running" means another client won the race: fine.
  if (line.find("already running") != std::string::npos) return absl::OkStatus();
  if (line.empty()) line = "no answer; see " + log_path;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return absl::UnavailableError(absl::StrCat("agentd did not start: ", line));
}

// A connected socket to the daemon, or -1 when nothing accepts on `socket_path`.
int ConnectSocket(const std::string& socket_path) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof addr.sun_path) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool DaemonAnswers(const std::string& socket_path) {
  int fd = ConnectSocket(socket_path);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

absl::StatusOr<std::unique_ptr<agent::v1::AgentDaemon::Stub>> Connect(const ConnectOptions& o) {
  int fd = ConnectSocket(o.socket_path);
  if (fd < 0) {
    if (!o.autostart) {
      return absl::UnavailableError("agentd is not running (socket " + o.socket_path + ")");
    }
    std::string dir = std::filesystem::path(o.socket_path).parent_path().string();
    if (auto s = EnsurePrivateDir(dir); !s.ok()) return s;
    std::string lock_path = o.socket_path + ".lock";
    int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0) return absl::UnavailableError("cannot open " + lock_path);
    ::flock(lock, LOCK_EX);  // the holder is starting a daemon; bounded by its start timeout
    absl::Status started = absl::OkStatus();
    fd = ConnectSocket(o.socket_path);
    if (fd < 0) {
      started = StartDaemon(o.socket_path);
      if (started.ok()) fd = ConnectSocket(o.socket_path);
    }
    ::close(lock);
    if (!started.ok()) return started;
    if (fd < 0)
      return absl::UnavailableError("agentd started but does not accept on " + o.socket_path);
  }
  // The channel runs on the socket just connected: no resolver, no second connection, and no
  // reconnecting either, which the client never wants (it reports a lost daemon and exits).
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  auto channel = grpc::CreateCustomInsecureChannelFromFd("agentd", fd, args);
  return agent::v1::AgentDaemon::NewStub(channel);
}

}  // namespace agent::client
