// `agent --host [user@]HOST`: the daemon on HOST, reached through the user's own ssh. The
// client starts `ssh -T … -- HOST '<remote agent>' proxy --protocol 1` with one end of a
// socketpair as ssh's stdin and stdout (its stderr is ours: password and host-key prompts and
// errors are seen), sends the request line, reads the reply (proxy_protocol.h) and runs the
// gRPC channel on its end of the pair, as Connect does on the local socket. The ssh process
// ignores Ctrl-C (the view's keys are ours), lives as long as the Connection and is ended
// and reaped with it. SSH authenticates; on HOST the proxy makes the same socket checks as a
// local client. Not thread-safe: the process-wide target is set once by main, before
// anything connects, and read on the main thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/v1/agent.pb.h"
#include "client/link/connection.h"
#include "client/link/proxy_protocol.h"
#include "client/link/remote_target.h"

namespace agent::client {

// The remote target of this process (none: the local daemon).
void SetRemoteTarget(std::optional<RemoteTarget> target);
const RemoteTarget* ActiveRemote();

// What the proxy said on the newest remote connection; nullptr before one.
const ProxyReply* RemoteHostInfo();

// The tool environment of the remote login (as the proxy reported it), without any entry
// whose value is this process's API key: what a remote session's tools run with, instead of
// this machine's PATH and HOME. nullopt without a remote connection.
std::optional<agent::v1::ToolEnvironment> RemoteToolEnvironment();

struct RemoteConnectOptions {
  bool autostart = true;  // the proxy starts HOST's daemon when none answers
  bool batch = false;     // ssh may not ask or say anything (a reconnect: the screen is the view's)
  absl::Duration timeout = absl::Minutes(2);  // ssh up (a password typed) and the reply read
  int cancel_fd = -1;  // readable: give up with Cancelled (the view's signal pipe)
};

// A connection to HOST's daemon. Unavailable when ssh fails (exit 255: ssh said why on
// stderr) or HOST's daemon does not answer; FailedPrecondition when HOST has no usable
// agent; PermissionDenied from the proxy's socket checks; DeadlineExceeded, Cancelled.
absl::StatusOr<Connection> ConnectRemote(const RemoteTarget& t, const RemoteConnectOptions& o);

// Runs `<remote agent> words…` on HOST with our stdin, stdout and stderr (with a terminal
// when `tty`) and returns its exit code; when ssh itself fails (255) says so on stderr and
// returns 1. For commands that act on HOST's files: `agent daemon …`, `agent mcp …`.
int RunRemoteCommand(const RemoteTarget& t, const std::vector<std::string>& words, bool tty);

}  // namespace agent::client
