// The user's choice of how confined tool commands are: `"sandbox"`, `"sandbox_network"`,
// `"sandbox_hide"` and `"sandbox_show"` in config.json, `AGENT_SANDBOX` in the environment. Only
// the user's own configuration sets these; a project's `.agent/settings.json` cannot loosen them.
// What the values mean is daemon/sandbox/sandbox_policy.h's business. Plain data; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/json.h"

namespace agent {

struct SandboxConfig {
  // "workspace-write" (the default), "read-only" or "off".
  std::string mode = "workspace-write";
  // Commands get the host's network (else their own empty network namespace).
  bool network = false;
  // `"sandbox_network": {"allow": [...], "deny": [...]}`: commands reach the hosts allowed,
  // and no others, through the daemon's proxy (daemon/sandbox/network_proxy.h).
  std::vector<std::string> network_allow;
  std::vector<std::string> network_deny;
  // Paths commands cannot read (`~/` expands to the home directory). Unset: the default list
  // (daemon/sandbox/sandbox_policy.h). The agent's own directories are hidden either way.
  std::optional<std::vector<std::string>> hide;
  // Paths taken off the hidden list (exactly as listed there, `~/` expanded), the rest kept:
  // a private registry's `~/.npmrc` a build inside needs.
  std::vector<std::string> show;
};

// Reads the four keys of config.json's object (`sandbox_network`: true, false, or an object
// with string lists `allow` and `deny`) `j` into `out`; InvalidArgument naming `path`
// and the key for a malformed value (an unknown mode too: a typo must not turn the sandbox off).
absl::Status SandboxConfigFromJson(const Json& j, const std::string& path, SandboxConfig* out);

// Applies AGENT_SANDBOX (a mode) when it is set; InvalidArgument for an unknown mode.
absl::Status SandboxConfigFromEnv(SandboxConfig* out);

// Whether `mode` is one of the three modes.
bool IsSandboxMode(const std::string& mode);

}  // namespace agent
