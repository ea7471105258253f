#include "daemon/sandbox/network_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace agent::daemon::sandbox {
namespace {

constexpr size_t kMaxHostBytes = 253;

bool HostChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == ':';
}

bool Matches(const HostPattern& p, const std::string& host, uint16_t port) {
  if (p.port != 0 && p.port != port) return false;
  if (!p.subdomains) return host == p.name;
  return host.size() > p.name.size() + 1 && host.ends_with(p.name) &&
         host[host.size() - p.name.size() - 1] == '.';
}

bool PublicV4(uint32_t a) {  // host byte order
  auto in = [a](uint32_t net, int bits) {
    const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
    return (a & mask) == (net & mask);
  };
  return !(in(0x00000000, 8) ||   // "this network"
           in(0x0a000000, 8) ||   // private
           in(0x64400000, 10) ||  // carrier-grade NAT
           in(0x7f000000, 8) ||   // loopback
           in(0xa9fe0000, 16) ||  // link-local
           in(0xac100000, 12) ||  // private
           in(0xc0000000, 24) ||  // IETF protocol assignments
           in(0xc0000200, 24) ||  // documentation
           in(0xc0a80000, 16) ||  // private
           in(0xc6120000, 15) ||  // benchmarking
           in(0xc6336400, 24) ||  // documentation
           in(0xcb007100, 24) ||  // documentation
           in(0xe0000000, 4) ||   // multicast
           in(0xf0000000, 4));    // reserved and broadcast
}

}  // namespace

absl::StatusOr<std::string> CanonicalHost(std::string_view host) {
  std::string h = absl::AsciiStrToLower(std::string(host));
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (!h.empty() && h.back() == '.') h.pop_back();
  if (h.empty() || h.size() > kMaxHostBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a host name: \"", std::string(host.substr(0, 64)), "\""));
  }
  for (char c : h) {
    if (!HostChar(c)) {
      return absl::InvalidArgumentError("a host name holds only letters, digits, -, _, . and :");
    }
  }
  return h;
}

absl::StatusOr<HostPattern> ParseHostPattern(std::string_view text) {
  const absl::Status bad = absl::InvalidArgumentError(
      absl::StrCat("\"", std::string(text.substr(0, 80)),
                   "\" is not a host pattern (\"example.com\", \"*.example.com\", "
                   "with an optional \":port\")"));
  HostPattern p;
  std::string_view rest = text;
  if (rest.starts_with("*.")) {
    p.subdomains = true;
    rest.remove_prefix(2);
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    uint32_t port = 0;
    const std::string_view digits = rest.substr(colon + 1);
    if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &port) || port == 0 ||
        port > 65535) {
      return bad;
    }
    p.port = static_cast<uint16_t>(port);
    rest = rest.substr(0, colon);
  }
  if (rest.find_first_of("*/:") != std::string_view::npos) return bad;
  absl::StatusOr<std::string> name = CanonicalHost(rest);
  if (!name.ok() || name->find('.') == std::string::npos) return bad;
  p.name = *std::move(name);
  return p;
}

absl::StatusOr<NetworkRules> ParseNetworkRules(const std::vector<std::string>& allow,
                                               const std::vector<std::string>& deny) {
  NetworkRules rules;
  for (const auto& [in, out] : {std::pair{&allow, &rules.allow}, std::pair{&deny, &rules.deny}}) {
    for (const std::string& text : *in) {
      absl::StatusOr<HostPattern> p = ParseHostPattern(text);
      if (!p.ok()) return p.status();
      out->push_back(*std::move(p));
    }
  }
  return rules;
}

HostVerdict DecideHost(const NetworkRules& rules, const std::string& host, uint16_t port) {
  for (const HostPattern& p : rules.deny) {
    if (Matches(p, host, port)) return {false, "on the deny list"};
  }
  for (const HostPattern& p : rules.allow) {
    if (Matches(p, host, port)) return {true, ""};
  }
  return {false, "not on the allow list"};
}

bool IsPublicAddress(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    return PublicV4(ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr));
  }
  if (addr->sa_family != AF_INET6) return false;
  const uint8_t* b = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr.s6_addr;
  auto v4_at = [b](int at) {
    return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
           b[at + 3];
  };
  bool zero10 = true;
  for (int i = 0; i < 10; ++i) zero10 = zero10 && b[i] == 0;
  if (zero10 && b[10] == 0xff && b[11] == 0xff) return PublicV4(v4_at(12));  // v4-mapped
  if (zero10 && b[10] == 0 && b[11] == 0) return false;  // ::, ::1, v4-compatible
  // NAT64 (64:ff9b::/96) carries an IPv4 address too.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) return PublicV4(v4_at(12));
  if ((b[0] & 0xfe) == 0xfc) return false;                  // unique local fc00::/7
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return false;  // link-local fe80::/10
  if (b[0] == 0xff) return false;                           // multicast
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return false;  // docs
  return (b[0] & 0xe0) == 0x20;  // only global unicast 2000::/3
}

}  // namespace agent::daemon::sandbox
