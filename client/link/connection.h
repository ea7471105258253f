// Connection to agentd over its Unix socket, starting the daemon when none answers (like
// tmux): under an flock on <socket>.lock so that two clients starting at once start one
// daemon (daemon_start.h). Before anything is sent the socket's directory and the server's
// uid are checked (socket_trust.h): the requests carry the API key. Not thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/v1/agent.grpc.pb.h"
#include "grpcpp/channel.h"

namespace agent::client {

struct ConnectOptions {
  std::string socket_path;
  bool autostart = true;
};

// The channel on the one connected socket, and a stub on it. The event stream reads from
// the channel directly (event_stream.h), the commands go through the stub.
struct Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<agent::v1::AgentDaemon::Stub> stub;
  std::shared_ptr<void> link;  // a remote connection's ssh process (remote.h); none locally
};

// A connection to a daemon known to be accepting, trusted as socket_trust.h says.
// PermissionDenied (one line naming the path and the owner) when the directory or the
// server is not trusted; Unavailable when no daemon answers (or starts). With a remote
// target set (remote.h: `agent --host`) the daemon is HOST's, reached through ssh, and
// `o.socket_path` is not used.
absl::StatusOr<Connection> Connect(const ConnectOptions& o);

// The connected socket's fd (close-on-exec) that Connect would run gRPC on, after the same
// checks: for `agent proxy`, which splices it to its stdio. Always this host's daemon.
absl::StatusOr<int> ConnectTrustedSocket(const ConnectOptions& o);

// A Connection whose channel runs on the connected stream `fd` (taken over: gRPC closes it).
Connection ConnectionOnFd(int fd);

// True when something accepts connections on `socket_path` right now (nothing is sent).
bool DaemonAnswers(const std::string& socket_path);

}  // namespace agent::client
