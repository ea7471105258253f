// The one exchange before the bytes of gRPC: the client writes a request line into the ssh
// channel, `agent proxy` on the remote host answers with one reply line, then both sides
// splice. Each line is "agent-proxy1 " and a JSON object. The reply says whether the daemon
// answered and what the remote side knows that the client must not guess from its own files:
// the project of the requested directory (project_root.h, resolved there), the remote home and
// the tool environment of the remote login. No secret is ever in either line. Pure;
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "client/link/project_root.h"

namespace agent::client {

inline constexpr std::string_view kProxyMagic = "agent-proxy1 ";
// A longer line is refused (the reply carries an environment: a few KiB).
inline constexpr size_t kMaxProxyLine = 1 << 20;

struct ProxyRequest {
  bool autostart = true;  // start the remote daemon when none answers
  std::string dir;        // the project directory; empty: the remote home
};

struct ProxyReply {
  absl::Status status;  // the daemon's connection (or the directory) failed: why
  ProjectDirs project;
  std::string home;
  std::string hostname;
  agent::v1::ToolEnvironment tool_env;
};

// The line, '\n' included.
std::string EncodeProxyRequest(const ProxyRequest& r);
std::string EncodeProxyReply(const ProxyReply& r);

// A line (with or without its '\n') that starts with kProxyMagic; InvalidArgument otherwise
// or when its JSON is not the expected object.
absl::StatusOr<ProxyRequest> DecodeProxyRequest(std::string_view line);
absl::StatusOr<ProxyReply> DecodeProxyReply(std::string_view line);

}  // namespace agent::client
