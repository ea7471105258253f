#include "daemon/sandbox/proxy_request.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/sandbox/network_policy.h"

namespace agent::daemon::sandbox {
namespace {

// "host:port" or "[v6]:port" (port required), or "host" with `default_port`.
bool SplitHostPort(absl::string_view text, uint16_t default_port, std::string* host,
                   uint16_t* port) {
  absl::string_view h = text;
  absl::string_view p;
  if (absl::StartsWith(h, "[")) {
    const size_t close = h.find(']');
    if (close == absl::string_view::npos) return false;
    p = h.substr(close + 1);
    h = h.substr(1, close - 1);
    if (!p.empty() && !absl::ConsumePrefix(&p, ":")) return false;
  } else if (const size_t colon = h.rfind(':'); colon != absl::string_view::npos) {
    p = h.substr(colon + 1);
    h = h.substr(0, colon);
  }
  uint32_t n = default_port;
  if (!p.empty() && !absl::SimpleAtoi(p, &n)) return false;
  if (n == 0 || n > 65535) return false;
  *host = std::string(h);
  *port = static_cast<uint16_t>(n);
  return true;
}

}  // namespace

absl::StatusOr<ProxyRequest> ParseRequest(const std::string& head) {
  // Lines end in CR LF only: a bare LF (or CR) is a line end to some origins and not to us, so
  // a header hidden behind one (`X: 1\nHost: other.example`) would go on unchecked.
  for (size_t i = 0; i < head.size(); ++i) {
    const bool bare_cr = head[i] == '\r' && (i + 1 == head.size() || head[i + 1] != '\n');
    const bool bare_lf = head[i] == '\n' && (i == 0 || head[i - 1] != '\r');
    if (bare_cr || bare_lf || head[i] == '\0') {
      return absl::InvalidArgumentError(
          "a line of the request ends without CR LF (or holds a NUL): refused");
    }
  }
  const absl::string_view line = absl::string_view(head).substr(0, head.find("\r\n"));
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  if (words.size() != 3 || !absl::StartsWith(words[2], "HTTP/1.")) {
    return absl::InvalidArgumentError("not an HTTP/1.1 proxy request");
  }
  ProxyRequest r;
  r.method = std::string(words[0]);
  r.version = std::string(words[2]);
  r.tunnel = r.method == "CONNECT";
  absl::string_view target = words[1];
  if (!r.tunnel) {
    if (!absl::ConsumePrefix(&target, "http://")) {
      return absl::InvalidArgumentError("only http:// URLs and CONNECT go through this proxy");
    }
    const size_t slash = target.find('/');
    r.path = slash == absl::string_view::npos ? "/" : std::string(target.substr(slash));
    target = target.substr(0, slash);
  }
  std::string raw_host;
  absl::StatusOr<std::string> host = absl::InvalidArgumentError("no host");
  if (SplitHostPort(target, r.tunnel ? 0 : 80, &raw_host, &r.port)) host = CanonicalHost(raw_host);
  if (!host.ok() || r.port == 0) return absl::InvalidArgumentError("the target is not host:port");
  r.host = *std::move(host);
  return r;
}

std::string OriginHead(const ProxyRequest& r, const std::string& head) {
  std::string out = absl::StrCat(r.method, " ", r.path, " ", r.version, "\r\n");
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view h = lines[i];
    if (h.empty()) continue;
    const std::string name = absl::AsciiStrToLower(h.substr(0, h.find(':')));
    if (name == "proxy-connection" || name == "proxy-authorization" || name == "connection" ||
        name == "keep-alive" || name == "host") {
      continue;
    }
    absl::StrAppend(&out, h, "\r\n");
  }
  absl::StrAppend(&out, "Host: ", HostHeader(r.host, r.port), "\r\nConnection: close\r\n\r\n");
  return out;
}

std::string HostHeader(const std::string& host, uint16_t port) {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port == 80 ? h : absl::StrCat(h, ":", port);
}

}  // namespace agent::daemon::sandbox
