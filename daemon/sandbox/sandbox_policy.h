// SandboxPolicy: what a confined command may do, as a value. Built once by the daemon from the
// user's configuration (common/sandbox_config.h) and its own paths; pure data afterwards,
// thread-safe to share.
//
// Confined by default (`workspace-write`): the whole filesystem readable, writable only in the
// project's work tree and a private /tmp; `.agent/` and everything git reads as configuration
// or runs as a hook read-only (git_control.h); the hidden paths (the user's secrets, the
// agent's own config and state, the daemon's socket directory, the user's runtime directory
// with its agent sockets) unreadable; no network (an empty network namespace: not even the
// host's loopback services), or the allowed hosts through a proxy (network_proxy.h); its own
// PID namespace; a new session (no terminal to inject input into); no new privileges (set-id
// bits do nothing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sandbox_config.h"
#include "daemon/sandbox/network_policy.h"

namespace agent::daemon::sandbox {

enum class SandboxMode { kWorkspaceWrite, kReadOnly, kOff };

struct SandboxPolicy {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  bool network = false;
  // The hosts commands reach through the daemon's proxy (network_proxy.h) when `network` is
  // off; null: none. `network_problem`: why a configured list is not used (a bad pattern):
  // then no host is reachable (fail closed).
  std::optional<NetworkRules> proxy;
  std::string network_problem;
  // Where each command's proxy socket directory is made (the daemon's own socket directory,
  // 0700), and the bridge that runs inside the sandbox (agentd-net-bridge beside agentd).
  std::string proxy_root;
  std::string net_bridge;
  // Tests only (AGENT_TEST_PROXY_LOOPBACK_PORT): the one loopback port the proxy may reach.
  uint16_t test_loopback_port = 0;
  // Absolute paths, as configured (symlinks are resolved when the argv is built).
  std::vector<std::string> hide;
  // The bubblewrap program: AGENT_BWRAP when set (tests name a missing one), else the first
  // `bwrap` of /usr/bin, /bin, /usr/local/bin.
  std::string bwrap = "/usr/bin/bwrap";
};

// "workspace-write", "read-only", "off".
const char* ModeName(SandboxMode mode);

// The secrets hidden when config.json names no `sandbox_hide` (`~/` = `home`): keys and cloud
// credentials, git hosts' and package registries' tokens, database passwords, keyrings and
// shell histories. `sandbox_show` takes single paths off the list.
std::vector<std::string> DefaultHiddenPaths(const std::string& home);

// The policy of `config` (`sandbox_show` applied after `sandbox_hide` or the defaults), with
// the paths that are hidden whatever the configuration says:
// `agent_dirs` (the agent's config and state directories), the directory of `socket_path`
// (the daemon's socket) and `runtime_dir` ($XDG_RUNTIME_DIR, where agent sockets live; may be
// empty). `~/` in configured paths expands to `home`.
SandboxPolicy PolicyFromConfig(const SandboxConfig& config, const std::string& home,
                               const std::vector<std::string>& agent_dirs,
                               const std::string& socket_path, const std::string& runtime_dir);

// The policy of this daemon: PolicyFromConfig with $HOME, ConfigDir(), StateDir(),
// $XDG_RUNTIME_DIR and AGENT_BWRAP from the environment.
SandboxPolicy DaemonPolicy(const SandboxConfig& config, const std::string& socket_path);

}  // namespace agent::daemon::sandbox
