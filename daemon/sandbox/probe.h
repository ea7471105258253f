// Whether bubblewrap can start a sandbox on this machine, and if not, exactly why and what
// fixes it: bwrap missing, user namespaces off (sysctl), AppArmor's restriction of
// unprivileged user namespaces, a container without the rights. Runs `bwrap <the real
// options> -- /bin/true` once (a few ms) through the process seam. Thread-safe; blocks its caller.
#pragma once

#include <string>

#include "daemon/base/process_runner.h"
#include "daemon/sandbox/sandbox_policy.h"

namespace agent::daemon::sandbox {

struct ProbeResult {
  bool available = false;
  std::string reason;  // when not available: one line, bwrap's own words included
  std::string fix;     // when not available: what to run or change
};

ProbeResult Probe(const SandboxPolicy& policy, const ProcessRunner& runner = RealProcessRunner());

}  // namespace agent::daemon::sandbox
