// Connection to agentd over its Unix socket, starting the daemon when none answers (like
// tmux): under an flock on <socket>.lock so that two clients starting at once start one
// daemon, which tells us through a pipe when it is accepting. Not thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/v1/agent.grpc.pb.h"

namespace agent::client {

struct ConnectOptions {
  std::string socket_path;
  bool autostart = true;
};

// A stub on a channel to a daemon known to be accepting.
absl::StatusOr<std::unique_ptr<agent::v1::AgentDaemon::Stub>> Connect(const ConnectOptions& o);

// True when something accepts connections on `socket_path` right now.
bool DaemonAnswers(const std::string& socket_path);

}  // namespace agent::client
