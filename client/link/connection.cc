#include "client/link/connection.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "client/link/daemon_start.h"
#include "client/link/remote.h"
#include "client/link/socket_trust.h"
#include "common/protocol.h"
#include "common/socket_dir.h"
#include "grpcpp/create_channel_posix.h"
#include "grpcpp/grpcpp.h"

namespace agent::client {
namespace {

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

std::string SocketDir(const std::string& socket_path) {
  std::string dir = std::filesystem::path(socket_path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Starts a daemon unless another client has just done so, then connects: the socket's fd.
absl::StatusOr<int> StartAndConnect(const std::string& socket_path) {
  std::string lock_path = socket_path + ".lock";
  int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0) return absl::UnavailableError("cannot open " + lock_path);
  ::flock(lock, LOCK_EX);  // the holder is starting a daemon; bounded by its start timeout
  absl::Status started = absl::OkStatus();
  int fd = ConnectSocket(socket_path);
  if (fd < 0) {
    started = StartDaemon(socket_path);
    if (started.ok()) fd = ConnectSocket(socket_path);
  }
  ::close(lock);
  if (!started.ok()) return started;
  if (fd < 0) return absl::UnavailableError("agentd started but does not accept on " + socket_path);
  return fd;
}

}  // namespace

bool DaemonAnswers(const std::string& socket_path) {
  int fd = ConnectSocket(socket_path);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

absl::StatusOr<int> ConnectTrustedSocket(const ConnectOptions& o) {
  // Whoever can write in the socket's directory can put their own server there.
  std::string dir = SocketDir(o.socket_path);
  absl::Status dir_ok = o.autostart ? EnsureSocketDir(dir) : CheckSocketDir(dir);
  if (absl::IsNotFound(dir_ok)) {
    return absl::UnavailableError("agentd is not running (socket " + o.socket_path + ")");
  }
  if (!dir_ok.ok()) return dir_ok;
  int fd = ConnectSocket(o.socket_path);
  if (fd < 0) {
    if (!o.autostart) {
      return absl::UnavailableError("agentd is not running (socket " + o.socket_path + ")");
    }
    absl::StatusOr<int> started = StartAndConnect(o.socket_path);
    if (!started.ok()) return started.status();
    fd = *started;
  }
  // Nothing has been written to the socket yet: gRPC starts only on a trusted server.
  if (absl::Status peer = CheckSocketPeer(fd, o.socket_path); !peer.ok()) {
    ::close(fd);
    return peer;
  }
  return fd;
}

absl::StatusOr<Connection> Connect(const ConnectOptions& o) {
  if (const RemoteTarget* remote = ActiveRemote(); remote != nullptr) {
    return ConnectRemote(*remote, RemoteConnectOptions{o.autostart});
  }
  absl::StatusOr<int> fd = ConnectTrustedSocket(o);
  if (!fd.ok()) return fd.status();
  return ConnectionOnFd(*fd);
}

Connection ConnectionOnFd(int fd) {
  // The channel runs on the socket just connected: no resolver, no second connection, and no
  // reconnecting either, which the client never wants (it reports a lost daemon and exits).
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  Connection c;
  c.channel = grpc::CreateCustomInsecureChannelFromFd("agentd", fd, args);
  c.stub = agent::v1::AgentDaemon::NewStub(c.channel);
  return c;
}

}  // namespace agent::client
