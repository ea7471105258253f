// Sandbox: the daemon's one confinement of tool commands: the policy (sandbox_policy.h) and
// whether bubblewrap can start here (probe.h, asked once, at construction). Immutable after
// construction; shared (shared_ptr<const>) by the sessions, the bash tool, `agent sandbox` and
// the MCP stdio servers; thread-safe.
//
// Never a silent fallback: when the mode is not off but the sandbox cannot start, Confines()
// is false and Problem() says why and how to fix it; the caller then asks a person about
// every command as before the sandbox existed, and shows the problem.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/sandbox/bwrap_argv.h"
#include "daemon/sandbox/network_proxy.h"
#include "daemon/sandbox/probe.h"
#include "daemon/sandbox/sandbox_policy.h"

namespace agent::daemon::sandbox {

class Sandbox {
 public:
  // Probes now unless the mode is off.
  explicit Sandbox(SandboxPolicy policy);
  // For tests: a known probe result, no probe run.
  Sandbox(SandboxPolicy policy, ProbeResult probe)
      : policy_(std::move(policy)), probe_(std::move(probe)) {}

  const SandboxPolicy& policy() const { return policy_; }
  // Commands run confined: the mode is not off and bubblewrap works here.
  bool Confines() const { return policy_.mode != SandboxMode::kOff && probe_.available; }
  // The mode is not off but the sandbox cannot start: "<reason>. Fix: <fix>". Else empty.
  std::string Problem() const;
  // One line for status displays: "workspace-write, network off", "off (commands are not
  // confined)", "unavailable: <reason>".
  std::string Describe() const;
  // The proxy of one command, when the policy routes the network through one (and `network`,
  // the whole network asked for, is off): listening before the command starts, its directory
  // to be put in SandboxTarget::proxy_dir, ended when the caller drops it. Null: no proxy.
  absl::StatusOr<std::unique_ptr<NetworkProxy>> StartProxy(
      bool network, std::function<void(const ProxyEvent&)> on_event) const;
  // `bwrap … -- /bin/bash -c command`; requires Confines().
  std::vector<std::string> Wrap(const SandboxTarget& target, const std::string& command,
                                bool network) const;
  // The bwrap options that confine a program run as `options + {"--", program, args…}`;
  // requires Confines().
  std::vector<std::string> Options(const SandboxTarget& target, bool network) const;
  // The bwrap options that only give a program a PID namespace of its own (BwrapContainOptions),
  // so that everything it starts ends with it; requires Confines().
  std::vector<std::string> ContainOptions(const std::string& cwd) const {
    return BwrapContainOptions(policy_.bwrap, cwd);
  }

 private:
  SandboxPolicy policy_;
  ProbeResult probe_;
};

// What a new session tells its people when commands are not confined: the sandbox cannot
// start (why, and the fix) or is off. Empty when it confines, or for null.
std::string SandboxNotice(const Sandbox* sandbox);

// The one-line reason the model gets with a refused write or connection: appended to a
// confined command's output when it failed and the sandbox plausibly caused it (not for
// escalated or unconfined runs).
std::string RefusalHint(const SandboxPolicy& policy);

// Whether a failed confined command's output shows the sandbox's hand, so that the model is
// told how to escalate only then (not after every failing `make test`). The signals, each on
// one line of the output: a read-only file system (nothing but the sandbox's own mounts is
// read-only in a writable work tree); a permission error naming a path outside `workdir` and
// the private /tmp, or a hidden one; a hidden path not found; and, with the network off, a
// failed name lookup or an unreachable network.
bool SandboxPlausiblyRefused(std::string_view output, const SandboxPolicy& policy,
                             const std::string& workdir);

}  // namespace agent::daemon::sandbox
