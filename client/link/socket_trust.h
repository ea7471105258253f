// What the client checks before it sends anything to a socket (DESIGN.md "Trust boundaries"):
// the API key travels in CreateSession and SendPrompt, so another local user must not be able
// to stand in for agentd. The socket's directory is checked as common/socket_dir.h says; the
// process listening on it must run as us or as root (SO_PEERCRED). Thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace agent::client {

// PermissionDenied unless the peer of the connected Unix socket `fd` (the process that called
// listen) runs as this process's uid or as root. `path` is for the message.
absl::Status CheckSocketPeer(int fd, const std::string& path);

}  // namespace agent::client
