// One HTTP/1.1 proxy request as the sandbox's network proxy (network_proxy.h) takes it: the
// request line parsed into its target, and for a plain request what goes on to the origin.
// Request text is a confined command's, so untrusted: a target must be a canonical host and a
// port, and what is sent on names the host that was checked. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace agent::daemon::sandbox {

struct ProxyRequest {
  bool tunnel = false;  // CONNECT
  std::string method, path, version;
  std::string host;  // canonical (network_policy.h)
  uint16_t port = 0;
};

// The request line of `head` (through its blank line): `CONNECT host:port HTTP/1.x`, or an
// absolute-form `GET http://host[:port]/path HTTP/1.x`. InvalidArgument, worded for the
// command's user, for anything else, and for a head with a bare CR or LF or a NUL anywhere (a
// header after one would reach the origin unchecked).
absl::StatusOr<ProxyRequest> ParseRequest(const std::string& head);

// What goes to the origin for a plain request: origin form, one request a connection, no
// proxy headers, and the Host the one checked (a Host naming another site behind the same
// address, a CDN, would reach what the list does not allow).
std::string OriginHead(const ProxyRequest& r, const std::string& head);

// The Host header for `host` and `port`: brackets around an IPv6 literal, the port unless 80.
std::string HostHeader(const std::string& host, uint16_t port);

}  // namespace agent::daemon::sandbox
