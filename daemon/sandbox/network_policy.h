// Which hosts a confined command may reach through the daemon's proxy (network_proxy.h): the
// `sandbox_network` allow and deny lists of the user's config.json, and the addresses no
// name may lead to. Pure data once built; thread-safe.
//
// A pattern is a host name (`registry.npmjs.org`, exactly that host) or `*.` and a name
// (`*.pypi.org`: its subdomains, not the name itself), either with an optional `:port`. Names
// are compared canonical: lower case, no trailing dot. Deny wins over allow; a host no allow
// pattern names is refused. Whatever a name resolves to, loopback, private, link-local,
// carrier-grade NAT, multicast and reserved addresses are refused (IsPublicAddress): an
// allowed name that resolves to 127.0.0.1 (DNS rebinding) reaches nothing.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon::sandbox {

struct HostPattern {
  std::string name;         // canonical, without the `*.`
  bool subdomains = false;  // `*.name`
  uint16_t port = 0;        // 0: any
};

// InvalidArgument naming the pattern for one that is not a host pattern (a URL, a bare `*`,
// control characters, `%`).
absl::StatusOr<HostPattern> ParseHostPattern(std::string_view text);

// `host` lower-cased, its trailing dot and IPv6 brackets dropped; InvalidArgument for one
// that is empty, over 253 bytes, or holds anything but letters, digits, `-`, `_`, `.` and `:`.
absl::StatusOr<std::string> CanonicalHost(std::string_view host);

struct NetworkRules {
  std::vector<HostPattern> allow;
  std::vector<HostPattern> deny;
};

// Parses both lists; the first bad pattern is the error.
absl::StatusOr<NetworkRules> ParseNetworkRules(const std::vector<std::string>& allow,
                                               const std::vector<std::string>& deny);

struct HostVerdict {
  bool allowed = false;
  std::string reason;  // why not: "not on the allow list", "on the deny list"
};

// Whether `host` (canonical) on `port` may be reached, by the lists alone.
HostVerdict DecideHost(const NetworkRules& rules, const std::string& host, uint16_t port);

// True for an address on the public internet; false for loopback, unspecified, private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), CGNAT
// (100.64/10), multicast, broadcast, reserved and documentation ranges, and IPv4-mapped or
// NAT64 forms of any of them.
bool IsPublicAddress(const sockaddr* addr);

}  // namespace agent::daemon::sandbox
