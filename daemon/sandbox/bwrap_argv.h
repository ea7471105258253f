// The bubblewrap command line that confines one command under a SandboxPolicy, and the
// environment it gets. Reads the filesystem (lstat, realpath) to learn which of the paths to
// protect and hide exist; otherwise pure. Thread-safe.
//
// Mount order matters, later mounts cover earlier ones: the read-only root, fresh /dev and
// /proc, a private /tmp, the files named in `readable`, the work tree (writable in
// workspace-write), its protected paths
// read-only again (`.agent/` and everything git reads as configuration: git_control.h), then the
// hidden paths covered (an empty read-only tmpfs over a directory, /dev/null over a file). A
// protected path is a mount point, so it cannot be renamed or removed either (`mv .git/hooks x`
// fails with EBUSY).
#pragma once

#include <string>
#include <vector>

#include "daemon/sandbox/git_control.h"
#include "daemon/sandbox/sandbox_policy.h"

namespace agent::daemon::sandbox {

struct SandboxTarget {
  std::string workdir;  // the project's work tree: absolute, canonical
  std::string cwd;      // where the command starts: inside `workdir`
  // --new-session and --die-with-parent: right for a command the spawning thread waits for
  // (bash). A long-lived server (MCP) started by a thread that may end stays in the daemon's
  // process group instead, so that killing the group ends the sandbox's init and with it
  // everything inside.
  bool own_session = true;
  // The `.git` entries of the work tree, when the caller found them already (to set aside
  // what the command makes anew: git_control.h); null: found when the argv is built.
  const GitEntries* git = nullptr;
  // The directory of this command's proxy socket (network_proxy.h), when its network goes
  // through one: bound inside at kProxyDirInside, and the command run by the bridge.
  std::string proxy_dir = {};
  // Files the program was told to run or read by its own command line (an approved MCP
  // server's script) that the private /tmp or /var/tmp would hide: each that is a regular file
  // under one of them, outside the work tree, is bound read-only where it is named. Nothing
  // else of /tmp appears (a directory or socket there is never bound).
  std::vector<std::string> readable = {};
  // The work tree bound read-only whatever the policy's mode (a session in plan mode).
  bool read_only = false;
};

// Where a command's proxy directory and the bridge program appear inside its sandbox: in its
// private /tmp, bound after that is made (a bind under /tmp made before it would be covered).
inline constexpr char kProxyDirInside[] = "/tmp/.agent-net";
inline constexpr char kNetBridgeInside[] = "/tmp/.agent-net-bridge";

// argv for posix_spawn: `bwrap … -- /bin/bash -c <command>` (with a proxy:
// `bwrap … -- <bridge> <socket> -- /bin/bash -c <command>`). `policy.mode` must not be kOff.
std::vector<std::string> BwrapArgv(const SandboxPolicy& policy, const SandboxTarget& target,
                                   const std::string& command);

// The mount and namespace options alone (no program), shared with the probe.
std::vector<std::string> BwrapOptions(const SandboxPolicy& policy, const SandboxTarget& target);

// A PID namespace and nothing else: the whole filesystem as it is (writable where the user may
// write), the network, the user's sockets. For the user's own MCP servers, which run as
// defined but must end whole: when the server exits or is killed, the namespace's init ends
// and the kernel kills everything it started, also what left its group with setsid or forked
// twice. bwrap sets no_new_privs, so setuid programs (sudo) do not raise privileges inside.
std::vector<std::string> BwrapContainOptions(const std::string& bwrap, const std::string& cwd);

// `env` without what reaches outside the sandbox: agent sockets (SSH_AUTH_SOCK, GPG agent, D-Bus,
// the daemon's AGENT_SOCKET) and a TMPDIR that the private /tmp replaces.
std::vector<std::string> SandboxEnvironment(const std::vector<std::string>& env);

}  // namespace agent::daemon::sandbox
