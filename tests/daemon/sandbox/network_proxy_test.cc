// The network by allow-list: host patterns, the addresses no name may lead to, and the proxy
// itself against an origin server on 127.0.0.1 (reachable only through the test switch).
#include "daemon/sandbox/network_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::sandbox {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(HostPatternTest, NamesSubdomainsAndPorts) {
  absl::StatusOr<NetworkRules> rules = ParseNetworkRules(
      {"registry.npmjs.org", "*.pypi.org", "GitHub.com.", "files.test:8443"}, {"evil.pypi.org"});
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_TRUE(DecideHost(*rules, "registry.npmjs.org", 443).allowed);
  EXPECT_FALSE(DecideHost(*rules, "npmjs.org", 443).allowed);
  EXPECT_FALSE(DecideHost(*rules, "x.registry.npmjs.org", 443).allowed);
  EXPECT_TRUE(DecideHost(*rules, "files.pypi.org", 443).allowed);
  EXPECT_FALSE(DecideHost(*rules, "pypi.org", 443).allowed);  // `*.` is subdomains only
  EXPECT_FALSE(DecideHost(*rules, "notpypi.org", 443).allowed);
  EXPECT_TRUE(DecideHost(*rules, "github.com", 443).allowed);
  EXPECT_TRUE(DecideHost(*rules, "files.test", 8443).allowed);
  EXPECT_FALSE(DecideHost(*rules, "files.test", 443).allowed);
  HostVerdict denied = DecideHost(*rules, "evil.pypi.org", 443);  // deny wins
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.reason, "on the deny list");
  EXPECT_EQ(DecideHost(*rules, "example.com", 80).reason, "not on the allow list");
  for (const char* bad : {"*", "https://github.com", "*.com.*", "a b.com", "x.com:0",
                          "evil.com\x01.pypi.org", "%25.pypi.org", "localhost"}) {
    EXPECT_FALSE(ParseHostPattern(bad).ok()) << bad;
  }
}

sockaddr_storage Addr(const char* text) {
  sockaddr_storage s{};
  if (std::strchr(text, ':') != nullptr) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&s);
    a->sin6_family = AF_INET6;
    EXPECT_EQ(::inet_pton(AF_INET6, text, &a->sin6_addr), 1) << text;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&s);
    a->sin_family = AF_INET;
    EXPECT_EQ(::inet_pton(AF_INET, text, &a->sin_addr), 1) << text;
  }
  return s;
}

TEST(IsPublicAddressTest, RefusesEveryLocalRange) {
  for (const char* local : {"127.0.0.1",
                            "127.1.2.3",
                            "0.0.0.0",
                            "10.1.2.3",
                            "172.16.0.1",
                            "172.31.255.255",
                            "192.168.1.1",
                            "169.254.169.254",
                            "100.64.0.1",
                            "224.0.0.1",
                            "255.255.255.255",
                            "192.0.2.1",
                            "::1",
                            "::",
                            "fe80::1",
                            "fc00::1",
                            "fd12::1",
                            "ff02::1",
                            "::ffff:127.0.0.1",
                            "::ffff:10.0.0.1",
                            "64:ff9b::a00:1",
                            "2001:db8::1"}) {
    sockaddr_storage s = Addr(local);
    EXPECT_FALSE(IsPublicAddress(reinterpret_cast<sockaddr*>(&s))) << local;
  }
  for (const char* pub :
       {"93.184.216.34", "151.101.1.63", "172.32.0.1", "2606:4700::1111", "::ffff:93.184.216.34"}) {
    sockaddr_storage s = Addr(pub);
    EXPECT_TRUE(IsPublicAddress(reinterpret_cast<sockaddr*>(&s))) << pub;
  }
}

// Names resolve through this map only.
class MapResolver : public Resolver {
 public:
  explicit MapResolver(std::map<std::string, std::string> m) : m_(std::move(m)) {}
  absl::StatusOr<std::vector<sockaddr_storage>> Resolve(const std::string& host,
                                                        uint16_t) const override {
    auto it = m_.find(host);
    if (it == m_.end()) return absl::NotFoundError("cannot resolve " + host);
    return std::vector<sockaddr_storage>{Addr(it->second.c_str())};
  }

 private:
  std::map<std::string, std::string> m_;
};

// One connection: keeps what it received up to the blank line, answers, closes.
class Origin {
 public:
  Origin() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      while (received_.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        received_.append(buf, static_cast<size_t>(n));
      }
      const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
      (void)!::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  ~Origin() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  const std::string& received() const { return received_; }  // after a reply was read

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::string received_;
  std::thread thread_;
};

class NetworkProxyTest : public ::testing::Test {
 protected:
  std::unique_ptr<NetworkProxy> Start(uint16_t loopback_port,
                                      std::map<std::string, std::string> names,
                                      const std::string& dir = "net") {
    ProxyOptions o;
    o.rules = *ParseNetworkRules({"pypi.test", "rebound.test"}, {});
    o.resolver = std::make_shared<MapResolver>(std::move(names));
    o.test_loopback_port = loopback_port;
    o.on_event = [this](const ProxyEvent& e) {
      MutexLock l(&mu_);
      events_.push_back(e);
    };
    auto p = NetworkProxy::Start(tmp_.Join(dir), std::move(o));
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : nullptr;
  }
  // Sends `request` through the proxy's socket; everything it answers until it closes.
  std::string Ask(const std::string& request, const std::string& dir = "net") {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = tmp_.Join(dir + "/proxy.sock");
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
    ::close(fd);
    return out;
  }
  std::vector<ProxyEvent> events() {
    MutexLock l(&mu_);
    return events_;
  }

  testing::TempDir tmp_;
  Mutex mu_;
  std::vector<ProxyEvent> events_ ABSL_GUARDED_BY(mu_);
};

TEST_F(NetworkProxyTest, AConnectToAnAllowedHostIsATunnel) {
  Origin origin;
  auto proxy = Start(origin.port(), {{"pypi.test", "127.0.0.1"}});
  const std::string target = "pypi.test:" + std::to_string(origin.port());
  std::string out = Ask("CONNECT " + target + " HTTP/1.1\r\nHost: " + target +
                        "\r\n\r\nGET /simple/ HTTP/1.1\r\nHost: pypi.test\r\n\r\n");
  EXPECT_THAT(out, StartsWith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK"));
  EXPECT_THAT(out, HasSubstr("hello"));
  EXPECT_THAT(origin.received(), StartsWith("GET /simple/ HTTP/1.1\r\n"));
  ASSERT_EQ(events().size(), 1u);
  EXPECT_TRUE(events()[0].allowed);
  EXPECT_TRUE(proxy->Refused().empty());
}

// Origin form, the proxy's headers dropped, and the Host the one checked: a Host naming another
// site behind the same address (a CDN) does not reach it.
TEST_F(NetworkProxyTest, APlainRequestGoesInOriginFormToTheHostChecked) {
  Origin origin;
  auto proxy = Start(origin.port(), {{"pypi.test", "127.0.0.1"}});
  const std::string port = std::to_string(origin.port());
  std::string out = Ask("GET http://pypi.test:" + port +
                        "/simple/x/ HTTP/1.1\r\nHost: evil.example\r\nAccept: */*\r\n"
                        "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n\r\n");
  EXPECT_THAT(out, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_EQ(origin.received(), "GET /simple/x/ HTTP/1.1\r\nAccept: */*\r\nHost: pypi.test:" + port +
                                   "\r\nConnection: close\r\n\r\n");
}

TEST_F(NetworkProxyTest, AHostOffTheListIsRefusedAndReported) {
  auto proxy = Start(0, {{"pypi.test", "93.184.216.34"}});
  std::string out = Ask("CONNECT evil.test:443 HTTP/1.1\r\n\r\n");
  EXPECT_THAT(out, StartsWith("HTTP/1.1 403 Forbidden\r\nX-Proxy-Error: blocked-by-allowlist"));
  EXPECT_THAT(out, HasSubstr("evil.test is not on the allow list"));
  ASSERT_EQ(proxy->Refused().size(), 1u);
  EXPECT_EQ(proxy->Refused()[0].host, "evil.test");
  EXPECT_THAT(RefusedConnectionsNote(proxy->Refused()),
              HasSubstr("refused evil.test:443 (not on the allow list). To go on: call bash "
                        "again with escalate: true"));
  EXPECT_EQ(ProxyEventLine(events()[0]),
            "[network] refused evil.test:443 (not on the allow list)\n");
}

// DNS rebinding: an allowed name that resolves to loopback or a private address reaches
// nothing, and neither does a literal one; the test switch opens one loopback port only.
TEST_F(NetworkProxyTest, AnAllowedNameThatResolvesToALocalAddressIsRefused) {
  Origin origin;
  auto proxy = Start(0, {{"rebound.test", "127.0.0.1"}, {"pypi.test", "10.0.0.7"}});
  const std::string port = std::to_string(origin.port());
  for (const std::string& target : {"rebound.test:" + port, "pypi.test:" + port}) {
    std::string out = Ask("CONNECT " + target + " HTTP/1.1\r\n\r\n");
    EXPECT_THAT(out, StartsWith("HTTP/1.1 403 Forbidden\r\nX-Proxy-Error: blocked-by-address"))
        << target;
  }
  EXPECT_THAT(proxy->Refused()[0].reason, HasSubstr("resolves to 127.0.0.1"));
  for (const std::string& literal : {"127.0.0.1:" + port, "[::1]:" + port, "2130706433:" + port}) {
    EXPECT_THAT(Ask("CONNECT " + literal + " HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 403"))
        << literal;
  }
  // The switch names another port: this one stays closed.
  auto other = Start(origin.port() + 1, {{"rebound.test", "127.0.0.1"}}, "other");
  EXPECT_THAT(Ask("CONNECT rebound.test:" + port + " HTTP/1.1\r\n\r\n", "other"),
              StartsWith("HTTP/1.1 403"));
}

TEST_F(NetworkProxyTest, GarbageIsABadRequestAndTheDirectoryGoesWithTheProxy) {
  auto proxy = Start(0, {});
  EXPECT_THAT(Ask("hello\r\n\r\n"), StartsWith("HTTP/1.1 400 Bad Request"));
  EXPECT_THAT(Ask("GET https://pypi.test/ HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  static const char kNul[] = "CONNECT pypi.test\0x.test:443 HTTP/1.1\r\n\r\n";
  EXPECT_THAT(Ask(std::string(kNul, sizeof kNul - 1)), StartsWith("HTTP/1.1 400"));
  proxy.reset();
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("net")));
}

}  // namespace
}  // namespace agent::daemon::sandbox
