// One command run inside the sandbox, as the bash tool and `agent sandbox` run it: the argv
// that confines it, and what to do once it ended. While it runs, everything git reads as
// configuration is read-only (git_control.h) and, with the network by allow-list, a proxy of
// its own is its only way out (network_proxy.h); once it ended, a `.git` it made is set aside
// and the proxy ends. Thread-safe (each call prepares its own).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/sandbox/network_proxy.h"
#include "daemon/sandbox/sandbox.h"

namespace agent::daemon::sandbox {

struct ConfinedCommand {
  std::vector<std::string> argv;  // bwrap … -- [bridge …] /bin/bash -c command
  // Call once, after the command (and all it started) ended: the lines the model is told
  // (what was set aside, the hosts refused), empty when there is nothing to say. Ends the proxy.
  std::function<std::string()> after;
};

// Requires box.Confines(). `network`: the whole network (`agent sandbox --network`), no proxy.
// `show`: each connection the proxy is asked for, as it is (may be empty). `read_only`: the
// work tree read-only whatever the policy says (plan mode).
absl::StatusOr<ConfinedCommand> PrepareConfined(const Sandbox& box, const std::string& workdir,
                                                const std::string& cwd, const std::string& command,
                                                bool network,
                                                std::function<void(const ProxyEvent&)> show,
                                                bool read_only = false);

}  // namespace agent::daemon::sandbox
