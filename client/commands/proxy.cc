#include "client/commands/proxy.h"

#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "client/commands/session_calls.h"
#include "client/link/connection.h"
#include "client/link/proxy_protocol.h"
#include "client/link/proxy_splice.h"
#include "common/paths.h"

namespace agent::client {
namespace {

// How long the client may take to send its request line once ssh is up.
constexpr int kRequestTimeoutMs = 60000;

// The request line from `fd`, and in `rest` whatever followed it in the same read.
absl::StatusOr<std::string> ReadRequestLine(int fd, std::string* rest) {
  std::string got;
  size_t nl;
  while ((nl = got.find('\n')) == std::string::npos) {  // bounded by kMaxProxyLine
    if (got.size() > kMaxProxyLine) return absl::InvalidArgumentError("request line too long");
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, kRequestTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return absl::DeadlineExceededError("no request from the client");
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the client went away");
    got.append(buf, static_cast<size_t>(n));
  }
  *rest = got.substr(nl + 1);
  got.resize(nl + 1);
  return got;
}

std::string Home() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return home;
  const passwd* pw = ::getpwuid(::getuid());
  return pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "/";
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// The directory the request names, as an existing directory's canonical path: empty and "~"
// are the home, "~/x" is under it, and a relative path is relative to where ssh started us
// (the home, normally).
absl::StatusOr<std::string> ResolveDir(const std::string& requested, const std::string& home) {
  std::string dir = requested;
  if (dir.empty() || dir == "~") {
    dir = home;
  } else if (absl::StartsWith(dir, "~/")) {
    dir = home + dir.substr(1);
  }
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(dir, ec);
  if (ec || !std::filesystem::is_directory(real, ec)) {
    return absl::NotFoundError("no directory " + requested + " on " + HostName());
  }
  return real.string();
}

bool WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {  // bounded by the size: each write moves bytes or fails
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The reply says why; stderr only when even that cannot be written (the client shows the
// reply, and ssh would show stderr beside it).
int Fail(const absl::Status& s) {
  ProxyReply reply;
  reply.status = s;
  if (!WriteAll(1, EncodeProxyReply(reply))) {
    std::fprintf(stderr, "agent proxy: %s\n", std::string(s.message()).c_str());
  }
  return 1;
}

}  // namespace

bool IsProxyCommand(const char* word) { return word != nullptr && std::strcmp(word, "proxy") == 0; }

int RunProxy(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[2], "--protocol") != 0 || std::strcmp(argv[3], "1") != 0) {
    std::fprintf(stderr,
                 "agent proxy: the remote end of `agent --host`, started through ssh "
                 "(agent proxy --protocol 1)\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a closed channel is an end, seen by write
  std::string rest;
  absl::StatusOr<std::string> line = ReadRequestLine(0, &rest);
  if (!line.ok()) return Fail(line.status());
  absl::StatusOr<ProxyRequest> req = DecodeProxyRequest(*line);
  if (!req.ok()) return Fail(req.status());
  ProxyReply reply;
  reply.home = Home();
  absl::StatusOr<std::string> dir = ResolveDir(req->dir, reply.home);
  if (!dir.ok()) return Fail(dir.status());
  absl::StatusOr<int> fd = ConnectTrustedSocket(ConnectOptions{SocketPath(), req->autostart});
  if (!fd.ok()) return Fail(fd.status());
  std::error_code ec;
  std::filesystem::path home = std::filesystem::canonical(reply.home, ec);
  if (!ec) reply.home = home.string();
  reply.project = FindProject(*dir);
  reply.hostname = HostName();
  reply.tool_env = ToolEnvFromProcess();
  if (!WriteAll(1, EncodeProxyReply(reply))) return 1;
  absl::Status s = Splice(0, 1, *fd, *fd, std::move(rest));
  ::close(*fd);
  return s.ok() ? 0 : 1;
}

}  // namespace agent::client
