// NetworkProxy: the door of one confined command to the network, when `sandbox_network` is a
// list of domains (network_policy.h). The daemon listens on a Unix socket in a directory of its
// own (0700) that only this command's sandbox has bound (bwrap_argv.h), never on a TCP port
// another local user could reach; inside, agentd-net-bridge (net_bridge_main.cc) carries the
// command's HTTP_PROXY connections to it. So every connection is known to belong to its
// command and session.
//
// It speaks HTTP/1.1 proxying: CONNECT host:port (HTTPS, git, npm, pip: the bytes are passed
// on, never decrypted) and absolute-form requests (`GET http://host/path`), one request per
// connection. Each target is checked by the lists, then resolved by the daemon (through the
// Resolver seam) and refused when any address is not public (IsPublicAddress), then dialled
// at exactly the addresses checked. A refusal is `403` with `X-Proxy-Error` and one line of
// text, and an event (ProxyEvent) the session shows and tells the model.
//
// Thread-safety: thread-safe. Threads: one accepting, one per connection (detached, at most
// kMaxConnections at once; more are refused). The destructor ends them all and waits.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "daemon/sandbox/network_policy.h"
#include "daemon/sandbox/proxy_request.h"

namespace agent::daemon::sandbox {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // The addresses of `host` (canonical), with `port` set; an error naming the host.
  virtual absl::StatusOr<std::vector<sockaddr_storage>> Resolve(const std::string& host,
                                                                uint16_t port) const = 0;
};

// getaddrinfo. When AGENT_TEST_RESOLVE is set ("name=address,…": tests, which never reach
// the internet), the names it lists resolve to those addresses and every other name fails.
std::shared_ptr<const Resolver> SystemResolver();

struct ProxyEvent {
  std::string host;
  uint16_t port = 0;
  bool allowed = false;
  std::string reason;  // a refusal's: "not on the allow list", "resolves to 127.0.0.1 …"
};

struct ProxyOptions {
  NetworkRules rules;
  std::shared_ptr<const Resolver> resolver;
  // Tests only (AGENT_TEST_PROXY_LOOPBACK_PORT): 127.0.0.1 is reachable on this one port.
  uint16_t test_loopback_port = 0;
  // Every connection asked for, allowed or refused; called from the connection's thread.
  std::function<void(const ProxyEvent&)> on_event;
};

class NetworkProxy {
 public:
  static constexpr size_t kMaxConnections = 64;
  // Distinct connections (host, port, verdict) reported; the rest are counted.
  static constexpr size_t kMaxReported = 32;
  static constexpr char kSocketName[] = "proxy.sock";

  // Makes `dir` (0700; it must not exist) and listens on dir/proxy.sock.
  static absl::StatusOr<std::unique_ptr<NetworkProxy>> Start(const std::string& dir,
                                                             ProxyOptions options);
  // Ends every connection, then removes the socket and the directory.
  ~NetworkProxy();
  NetworkProxy(const NetworkProxy&) = delete;
  NetworkProxy& operator=(const NetworkProxy&) = delete;

  const std::string& dir() const { return dir_; }
  // The refusals so far, in order, each host and port once (at most kMaxReported).
  std::vector<ProxyEvent> Refused() const;
  // Connections not reported past kMaxReported.
  size_t Unreported() const;

 private:
  NetworkProxy(std::string dir, ProxyOptions options, int listen_fd, int stop_fd);
  struct Refusal {
    int code;
    std::string kind;  // X-Proxy-Error
    std::string text;
  };
  void AcceptLoop();
  void Serve(int fd);
  // Whether `r`'s target may be reached (the lists, then every address it resolves to), and
  // the addresses to dial; else the refusal, and why in `reason`.
  std::optional<Refusal> Admit(const ProxyRequest& r, std::vector<sockaddr_storage>* addrs,
                               std::string* reason) const;
  void Report(ProxyEvent e);

  const std::string dir_;
  const ProxyOptions options_;
  const int listen_fd_;
  const int stop_fd_;  // an eventfd: readable once the proxy stops
  std::thread acceptor_;
  mutable Mutex mu_;
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);  // shut down when the proxy stops
  size_t active_ ABSL_GUARDED_BY(mu_) = 0;          // connection threads (detached) running
  CondVar idle_;                                    // signalled when active_ falls
  std::vector<ProxyEvent> refused_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> reported_ ABSL_GUARDED_BY(mu_);
  size_t unreported_ ABSL_GUARDED_BY(mu_) = 0;
};

// "[network] allowed registry.npmjs.org:443" / "[network] refused evil.test:443 (not on the
// allow list)": what the people attached see of each connection.
std::string ProxyEventLine(const ProxyEvent& e);

// The line the model gets after a command whose connections were refused: each host and the
// two ways on (escalate, or ask the person to allow the domain). Empty for none.
std::string RefusedConnectionsNote(const std::vector<ProxyEvent>& refused);

}  // namespace agent::daemon::sandbox
