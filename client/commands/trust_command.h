// `agent trust [--yes] [--revoke]` and the calls /trust shares with it: the allow rules of the
// project's own .agent/settings.json take effect only once a person trusted them for this
// project (daemon/policy/trusted_rules.h). Lists the untrusted rules (control characters made
// visible: they are repository content), then trusts exactly the rules shown: with --yes at
// once, on a terminal after "[y/N]", without either it lists and refuses (exit 1), like
// `agent undo`. --revoke forgets every rule trusted for the project. --sessions takes the
// sessions an older agentd kept in .agent/sessions/ (daemon/store/legacy_sessions.h), asked the
// same way. Goes through the daemon (so `agent --host` works). Not thread-safe (may exit the
// process).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.grpc.pb.h"

namespace agent::client {

// argv[1] is "trust". Returns the exit code.
int RunTrustSubcommand(int argc, char** argv);

// TrustProjectRules for `workdir`: `rules` empty lists only; `revoke` forgets. The error text is
// terminal-safe.
absl::StatusOr<agent::v1::TrustProjectRulesResponse> CallTrust(
    agent::v1::AgentDaemon::Stub& stub, const std::string& workdir,
    const std::vector<std::string>& rules, bool revoke);

// "<settings> allows N rule(s) you have not trusted for this project:" and the rules, one a
// line, control characters visible.
std::string UntrustedRulesList(const agent::v1::TrustProjectRulesResponse& listed);

}  // namespace agent::client
