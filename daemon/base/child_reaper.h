// Reaping what the daemon's children leave behind. agentd is a child subreaper, so a process
// whose parent died while it ran (a command's background job, the init of a bwrap sandbox)
// becomes the daemon's child when it is orphaned, and a zombie for as long as the daemon lives
// unless something here reaps it. The process seam (process_runner.h) calls these after each
// program it started; nothing else needs to.
#pragma once

#include <sys/types.h>

#include <chrono>

#include "absl/status/status.h"

namespace agent::daemon {

// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER), so that a
// killed command's grandchildren are reaped here at once instead of by init, which on some
// systems takes seconds and leaves zombies in the group meanwhile. Process-wide; agentd calls
// it once at start-up.
absl::Status BecomeChildSubreaper();

// Reaps the children of ours left in process group `pgid` (already sent SIGKILL: a matter of a
// moment), waiting up to `limit` for them; returns when none of ours is left in it.
void ReapGroup(pid_t pgid, std::chrono::milliseconds limit);

// bwrap exits as soon as its command's status is known, without waiting for the sandbox's init
// (its child), which is then re-parented to this process. This reaps every child of ours that
// lives in a PID namespace below ours: never one we spawned (posix_spawn keeps a child in
// ours), so none that a caller waits for. One still running is ending (bwrap's
// --die-with-parent, or a group kill) and is waited for, up to 500 ms; one left then is reaped
// by a later call. Thread-safe.
void ReapOrphanedSandboxInits();

}  // namespace agent::daemon
