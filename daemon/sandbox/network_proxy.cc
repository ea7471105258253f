#include "daemon/sandbox/network_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "daemon/sandbox/proxy_request.h"
#include "daemon/sandbox/relay.h"

namespace agent::daemon::sandbox {
namespace {

constexpr size_t kMaxHead = 16 << 10;
constexpr int kHeadTimeoutMs = 30000;
constexpr int kConnectTimeoutMs = 10000;

class TestOrSystemResolver : public Resolver {
 public:
  TestOrSystemResolver() {
    const char* spec = std::getenv("AGENT_TEST_RESOLVE");
    if (spec == nullptr || *spec == '\0') return;
    test_ = true;
    for (absl::string_view pair : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
      map_[absl::AsciiStrToLower(kv.first)] = kv.second;
    }
  }

  absl::StatusOr<std::vector<sockaddr_storage>> Resolve(const std::string& host,
                                                        uint16_t port) const override {
    std::string name = host;
    if (test_) {
      auto it = map_.find(host);
      if (it == map_.end()) {
        return absl::NotFoundError(absl::StrCat("cannot resolve ", host, " (test resolver)"));
      }
      name = it->second;
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (test_) hints.ai_flags = AI_NUMERICHOST;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = ::getaddrinfo(name.c_str(), service.c_str(), &hints, &res); rc != 0) {
      return absl::NotFoundError(absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
    }
    std::vector<sockaddr_storage> out;
    for (addrinfo* a = res; a != nullptr && out.size() < 16; a = a->ai_next) {
      sockaddr_storage s{};
      std::memcpy(&s, a->ai_addr, std::min<size_t>(a->ai_addrlen, sizeof s));
      out.push_back(s);
    }
    ::freeaddrinfo(res);
    return out;
  }

 private:
  bool test_ = false;
  std::map<std::string, std::string> map_;
};

std::string AddressText(const sockaddr_storage& s) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (s.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&s)->sin_addr, buf, sizeof buf);
  } else if (s.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&s)->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

absl::StatusOr<std::vector<sockaddr_storage>> LiteralAddress(const std::string& host) {
  sockaddr_storage s{};
  if (::inet_pton(AF_INET, host.c_str(), &reinterpret_cast<sockaddr_in*>(&s)->sin_addr) == 1) {
    s.ss_family = AF_INET;
  } else if (::inet_pton(AF_INET6, host.c_str(), &reinterpret_cast<sockaddr_in6*>(&s)->sin6_addr) ==
             1) {
    s.ss_family = AF_INET6;
  } else {
    return absl::NotFoundError("not an address");
  }
  return std::vector<sockaddr_storage>{s};
}

bool IsTestLoopback(const sockaddr_storage& s, uint16_t port, uint16_t allowed_port) {
  if (allowed_port == 0 || port != allowed_port || s.ss_family != AF_INET) return false;
  return ntohl(reinterpret_cast<const sockaddr_in*>(&s)->sin_addr.s_addr) == INADDR_LOOPBACK;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Refuse(int fd, int code, const std::string& kind, const std::string& text) {
  const std::string body = absl::StrCat(text, "\n");
  const char* phrase = code == 400 ? " Bad Request" : code == 403 ? " Forbidden" : " Bad Gateway";
  WriteAll(fd, absl::StrCat("HTTP/1.1 ", code, phrase, "\r\nX-Proxy-Error: ", kind,
                            "\r\nContent-Type: text/plain\r\n"
                            "Content-Length: ",
                            body.size(), "\r\nConnection: close\r\n\r\n", body));
}

// The request head (through the blank line) and what came after it, or nullopt.
std::optional<std::pair<std::string, std::string>> ReadHead(int fd, int stop_fd) {
  std::string buf;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kHeadTimeoutMs);
  while (buf.size() < kMaxHead) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>(left.count())) <= 0 || p[1].revents != 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buf.append(chunk, static_cast<size_t>(n));
    if (const size_t end = buf.find("\r\n\r\n"); end != std::string::npos) {
      return std::pair{buf.substr(0, end + 4), buf.substr(end + 4)};
    }
  }
  return std::nullopt;
}

int ConnectTo(const sockaddr_storage& addr, int stop_fd) {
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const socklen_t len = addr.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  pollfd p[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
  int err = 0;
  socklen_t err_len = sizeof err;
  if (::poll(p, 2, kConnectTimeoutMs) <= 0 || p[1].revents != 0 ||
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // Relayed bytes go on at once: a short last piece must not wait for an acknowledgement.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

std::shared_ptr<const Resolver> SystemResolver() {
  return std::make_shared<const TestOrSystemResolver>();
}

absl::StatusOr<std::unique_ptr<NetworkProxy>> NetworkProxy::Start(const std::string& dir,
                                                                  ProxyOptions options) {
  if (::mkdir(dir.c_str(), 0700) != 0) {
    return absl::InternalError(absl::StrCat("cannot make ", dir, ": ", std::strerror(errno)));
  }
  const std::string path = dir + "/" + kSocketName;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    ::rmdir(dir.c_str());
    return absl::InternalError(absl::StrCat("socket path too long: ", path));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int stop = ::eventfd(0, EFD_CLOEXEC);
  if (fd < 0 || stop < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 128) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (stop >= 0) ::close(stop);
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
    return absl::InternalError(absl::StrCat("cannot listen on ", path, ": ", why));
  }
  if (options.resolver == nullptr) options.resolver = SystemResolver();
  std::unique_ptr<NetworkProxy> proxy(new NetworkProxy(dir, std::move(options), fd, stop));
  try {
    proxy->acceptor_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  } catch (const std::system_error&) {
    return absl::ResourceExhaustedError("cannot start the network proxy's thread");
  }
  return proxy;
}

NetworkProxy::NetworkProxy(std::string dir, ProxyOptions options, int listen_fd, int stop_fd)
    : dir_(std::move(dir)),
      options_(std::move(options)),
      listen_fd_(listen_fd),
      stop_fd_(stop_fd) {}

NetworkProxy::~NetworkProxy() {
  const uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
  if (acceptor_.joinable()) acceptor_.join();
  {
    MutexLock l(&mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    while (active_ > 0) idle_.Wait(&mu_);
  }
  ::close(listen_fd_);
  ::close(stop_fd_);
  ::unlink((dir_ + "/" + kSocketName).c_str());
  ::rmdir(dir_.c_str());
}

std::vector<ProxyEvent> NetworkProxy::Refused() const {
  MutexLock l(&mu_);
  return refused_;
}

void NetworkProxy::Report(ProxyEvent e) {
  {
    // Each host, port and verdict once, and at most kMaxReported of them: a loop over many
    // names must not swell the model's result or the clients' screens.
    MutexLock l(&mu_);
    if (!reported_.insert(absl::StrCat(e.allowed, " ", e.host, ":", e.port)).second) return;
    if (reported_.size() > kMaxReported) {
      ++unreported_;
      return;
    }
    if (!e.allowed) refused_.push_back(e);
  }
  if (options_.on_event) options_.on_event(e);
}

size_t NetworkProxy::Unreported() const {
  MutexLock l(&mu_);
  return unreported_;
}

void NetworkProxy::AcceptLoop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents != 0) return;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors: the listener stays readable, so wait a little (or for the stop)
      // instead of spinning on it.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        pollfd stop{stop_fd_, POLLIN, 0};
        ::poll(&stop, 1, 100);
      }
      continue;
    }
    MutexLock l(&mu_);
    if (active_ >= kMaxConnections) {
      ::close(fd);
      continue;
    }
    try {
      std::thread([this, fd] { Serve(fd); }).detach();
      ++active_;
      open_fds_.push_back(fd);
    } catch (const std::system_error&) {
      ::close(fd);
    }
  }
}

std::optional<NetworkProxy::Refusal> NetworkProxy::Admit(const ProxyRequest& r,
                                                         std::vector<sockaddr_storage>* addrs,
                                                         std::string* reason) const {
  if (HostVerdict verdict = DecideHost(options_.rules, r.host, r.port); !verdict.allowed) {
    *reason = verdict.reason;
    return Refusal{403, "blocked-by-allowlist",
                   absl::StrCat(r.host, " is ", verdict.reason, " of the sandbox's network")};
  }
  // An address written as one is that address; a name is the resolver's.
  absl::StatusOr<std::vector<sockaddr_storage>> found = LiteralAddress(r.host);
  if (!found.ok()) found = options_.resolver->Resolve(r.host, r.port);
  if (!found.ok() || found->empty()) {
    *reason = found.ok() ? "no address" : std::string(found.status().message());
    return Refusal{502, "dns-failed", *reason};
  }
  for (sockaddr_storage& a : *found) {
    if (a.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&a)->sin_port = htons(r.port);
    if (a.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&a)->sin6_port = htons(r.port);
    if (!IsPublicAddress(reinterpret_cast<const sockaddr*>(&a)) &&
        !IsTestLoopback(a, r.port, options_.test_loopback_port)) {
      *reason = absl::StrCat("resolves to ", AddressText(a),
                             ", a loopback, private or link-local address");
      return Refusal{403, "blocked-by-address", absl::StrCat(r.host, " ", *reason)};
    }
  }
  *addrs = *std::move(found);
  return std::nullopt;
}

void NetworkProxy::Serve(int fd) {
  int upstream = -1;
  auto done = [&] {
    MutexLock l(&mu_);
    if (upstream >= 0) {
      std::erase(open_fds_, upstream);
      ::close(upstream);
    }
    std::erase(open_fds_, fd);
    ::close(fd);
    --active_;
    idle_.SignalAll();
  };
  std::optional<std::pair<std::string, std::string>> head = ReadHead(fd, stop_fd_);
  if (!head.has_value()) return done();
  absl::StatusOr<ProxyRequest> request = ParseRequest(head->first);
  if (!request.ok()) {
    Refuse(fd, 400, "bad-request", std::string(request.status().message()));
    return done();
  }
  ProxyEvent event{request->host, request->port, false, ""};
  std::vector<sockaddr_storage> addrs;
  std::optional<Refusal> refusal = Admit(*request, &addrs, &event.reason);
  if (!refusal.has_value()) {
    for (const sockaddr_storage& a : addrs) {
      if ((upstream = ConnectTo(a, stop_fd_)) >= 0) break;
    }
    if (upstream < 0) {
      event.reason = "cannot connect";
      refusal = Refusal{502, "connect-failed",
                        absl::StrCat("cannot connect to ", request->host, ":", request->port)};
    }
  }
  if (refusal.has_value()) {
    Refuse(fd, refusal->code, refusal->kind, refusal->text);
    Report(std::move(event));
    return done();
  }
  {
    MutexLock l(&mu_);
    open_fds_.push_back(upstream);  // a write blocked on it ends when the proxy stops
  }
  event.allowed = true;
  Report(event);
  const bool sent = request->tunnel ? WriteAll(fd, "HTTP/1.1 200 Connection established\r\n\r\n")
                                    : WriteAll(upstream, OriginHead(*request, head->first));
  if (sent && (head->second.empty() || WriteAll(upstream, head->second))) {
    Relay(fd, upstream, stop_fd_);
  }
  done();
}

std::string ProxyEventLine(const ProxyEvent& e) {
  return e.allowed ? absl::StrCat("[network] allowed ", e.host, ":", e.port, "\n")
                   : absl::StrCat("[network] refused ", e.host, ":", e.port, " (", e.reason, ")\n");
}

std::string RefusedConnectionsNote(const std::vector<ProxyEvent>& refused) {
  if (refused.empty()) return "";
  std::vector<std::string> hosts;
  for (const ProxyEvent& e : refused) {
    hosts.push_back(absl::StrCat(e.host, ":", e.port, " (", e.reason, ")"));
  }
  return absl::StrCat(
      "[sandbox network: refused ", absl::StrJoin(hosts, ", "),
      ". To go on: call bash again with escalate: true and a justification (a person decides), "
      "or ask the person to allow the domain (\"sandbox_network\": {\"allow\": [...]} in "
      "config.json)]");
}

}  // namespace agent::daemon::sandbox
