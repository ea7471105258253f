// Server: owns the Unix socket, the gRPC server and the SessionManager, and decides when the
// daemon exits (on Shutdown RPC or SIGTERM/SIGINT, after ending every turn cleanly).
//
// The daemon accepts connections itself: accept4 on the socket, SO_PEERCRED to refuse other
// users, O_NONBLOCK, then grpc::AddInsecureChannelFromFd on a server with no listening port.
// That keeps the uid check in our hands and serves a socket inherited from systemd the same
// way. Thread-safety: Run on one thread; RequestShutdown from any thread or a signal handler.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "common/config.h"
#include "daemon/service/agent_service.h"
#include "daemon/service/session_manager.h"
#include "grpcpp/grpcpp.h"

namespace agent::daemon {

// Largest request the daemon accepts: 16 MiB, room for a prompt of several MB. gRPC refuses a
// bigger one with RESOURCE_EXHAUSTED ("Received message larger than max (N vs. 16777216)")
// before it is handed to us, so a client cannot make the daemon hold an arbitrary amount.
// Replies stay bounded by kMaxMessageBytes only: a snapshot carries the whole transcript.
inline constexpr int kMaxRequestBytes = 16 << 20;

struct ServerOptions {
  std::string socket_path;
  int inherited_fd = -1;  // a listening socket from systemd; -1: bind socket_path
  int ready_fd = -1;      // written to ("ok\n" or an error line) once accepting, then closed
  Config config;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();

  // Binds (removing a stale socket, refusing when a live daemon answers or the path is not a
  // socket: FailedPrecondition, the file untouched), starts gRPC and
  // serves until shutdown is requested; then ends turns, saves and returns.
  absl::Status Run();
  // Async-signal-safe. kRestart (a signal: systemd, a package upgrade) lets attached clients
  // wait for the daemon to come back; kStop (`agent daemon stop`) tells them it will not.
  enum class Stop : char { kRestart = 'r', kStop = 's' };
  void RequestShutdown(Stop kind = Stop::kRestart);

 private:
  absl::Status Bind();
  void AcceptLoop();
  // What the wake pipe says: kStop when any request was a deliberate stop.
  Stop RequestedStop();

  ServerOptions options_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::string epoch_;
  std::unique_ptr<mcp::Registry> mcp_;  // outlives the sessions and the service that use it
  std::unique_ptr<SessionManager> sessions_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::thread accept_thread_;
};

}  // namespace agent::daemon
