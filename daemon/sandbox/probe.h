// Whether bubblewrap can start a sandbox on this machine, and if not, exactly why and what
// fixes it: bwrap missing, user namespaces off (sysctl), AppArmor's restriction of
// unprivileged user namespaces, a container without the rights. Runs `bwrap <the real
// options> -- /bin/true` once (a few ms). Thread-safe; blocks its caller.
#pragma once

#include <string>

#include "daemon/sandbox/sandbox_policy.h"

namespace agent::daemon::sandbox {

struct ProbeResult {
  bool available = false;
  std::string reason;  // when not available: one line, bwrap's own words included
  std::string fix;     // when not available: what to run or change
};

ProbeResult Probe(const SandboxPolicy& policy);

// bwrap exits as soon as its command's status is known, without waiting for the sandbox's init
// (its child), which is then re-parented: to this process when it is a child subreaper
// (tools::BecomeChildSubreaper), a zombie here for as long as it lives unless reaped. This reaps
// every child of ours that lives in a PID namespace below ours: never one we spawned
// (posix_spawn keeps a child in ours), so none that a caller waits for. One still running is
// ending (bwrap's --die-with-parent, or a group kill) and is waited for, up to 500 ms; one
// left then is reaped by a later call. Call it after reaping a bwrap. Thread-safe.
void ReapOrphanedSandboxInits();

}  // namespace agent::daemon::sandbox
