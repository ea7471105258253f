// What the policy decides about a gated call once the sandbox is taken into account: auto mode
// (POLICY_MODE_AUTO) and escalations (`bash` with `escalate: true`). Wraps call_policy.h's
// DecideCall, which knows nothing of the sandbox. Pure; thread-safe.
//
// Auto: a bash command the sandbox confines runs without asking (the sandbox, not a question,
// keeps it in the project), a file edit inside the project too; deny rules still refuse;
// protected paths (.agent/, anything under a .git) and every other gated tool are asked about;
// where the sandbox cannot start, bash is asked about as in ask mode.
//
// Escalation: the command runs outside the sandbox, so only a person's answer to that very call
// (requires_person, which no --yes client answers) or an escalation rule the person recorded
// for that exact command (`bash_escalated(<command>)`, from "always") runs it. Deny rules for
// bash still refuse; a read-only session and a run that cannot ask refuse; an escalation
// without a justification is refused. Allow rules for `bash` and --yes never apply.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "daemon/policy/call_policy.h"
#include "daemon/policy/rules.h"

namespace agent::daemon {

// The rule name of escalations: `bash_escalated(make install)`.
inline constexpr char kEscalationTool[] = "bash_escalated";

// `bash` with `escalate: true`.
bool IsEscalation(const std::string& tool, const Json& args);

// The verdict for `call` (facts from GatherCallFacts). For an escalation `call` gets a
// protected_reason, so that a question about it needs a person. `sandbox_confines`: bash
// commands run inside the sandbox (sandbox::Sandbox::Confines()).
CallVerdict DecideGatedCall(agent::v1::PolicyMode mode,
                            const absl::StatusOr<policy::RuleSet>& rules, const Json& args,
                            bool sandbox_confines, CallFacts* call);

// What "allow always" proposes: for an escalation only its own escalation rule, else
// policy::ProposePrefixRules (`git status -s` -> `bash(git status *)`).
std::vector<std::string> ProposedRules(const std::string& tool, const Json& args,
                                       const CallFacts& call);
// The narrow alternative a person may choose instead ("exactly"): policy::ProposeRules, or
// empty when it is no narrower than ProposedRules.
std::vector<std::string> ExactRules(const std::string& tool, const Json& args,
                                    const CallFacts& call);

}  // namespace agent::daemon
