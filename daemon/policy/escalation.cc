#include "daemon/policy/escalation.h"

#include "absl/strings/str_cat.h"
#include "daemon/policy/bash_split.h"
#include "daemon/tools/bash_request.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using K = CallVerdict::Kind;

// The bash tool's own reading of the call (checked arguments: tools/tool_input.h).
tools::BashRequest Request(const Json& args) {
  absl::StatusOr<tools::BashRequest> r = tools::ReadBashRequest(args);
  return r.ok() ? *std::move(r) : tools::BashRequest{};
}

std::string Command(const Json& args) { return Request(args).command; }

bool HasControlCharacter(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool EscalationAllowed(const policy::RuleSet& rules, const std::string& command) {
  const std::string wanted = policy::NormalizeCommandWhitespace(command);
  for (const policy::Rule& r : rules.allow) {
    if (r.tool == kEscalationTool && !r.pattern.empty() &&
        policy::NormalizeCommandWhitespace(r.pattern) == wanted) {
      return true;
    }
  }
  return false;
}

CallVerdict DecideEscalation(v1::PolicyMode mode, const absl::StatusOr<policy::RuleSet>& rules,
                             const Json& args, CallFacts* call) {
  // Read-only sessions, broken rule files and deny rules refuse first, as for any bash call.
  CallFacts plain = *call;
  plain.protected_reason.reset();
  CallVerdict v = DecideCall(v1::POLICY_MODE_YES, rules, plain);
  if (v.kind == K::kRefuse || mode == v1::POLICY_MODE_READ_ONLY) {
    return {K::kRefuse, v.refusal.empty() ? "Denied: this session is read-only." : v.refusal};
  }
  const std::string justification = Request(args).justification;
  if (justification.find_first_not_of(" \t\n") == std::string::npos) {
    return {K::kRefuse,
            "Not run: escalate needs a justification (why the sandbox is not enough); run the "
            "command without escalate, or call again with a justification."};
  }
  call->protected_reason =
      absl::StrCat("it asks to run outside the sandbox (escalation): ", justification);
  if (EscalationAllowed(*rules, Command(args))) return {K::kRun, ""};
  if (mode == v1::POLICY_MODE_DENY_UNRULED) {
    return {K::kRefuse,
            "Denied: an escalation needs a person's approval, and nobody can be asked in this "
            "run. Run the command without escalate."};
  }
  return {K::kAsk, ""};
}

}  // namespace

bool IsEscalation(const std::string& tool, const Json& args) {
  return tool == "bash" && Request(args).escalate;
}

CallVerdict DecideGatedCall(v1::PolicyMode mode, const absl::StatusOr<policy::RuleSet>& rules,
                            const Json& args, bool sandbox_confines, CallFacts* call) {
  if (mode == v1::POLICY_MODE_PLAN) {
    // Reading only: bash inside the sandbox, where the session binds the project read-only
    // (ToolContext::read_only); deny rules still refuse. Nothing else gated runs.
    if (call->tool == "bash" && sandbox_confines && !IsEscalation(call->tool, args)) {
      CallFacts confined = *call;
      confined.protected_reason.reset();
      return DecideCall(v1::POLICY_MODE_YES, rules, confined);
    }
    return {K::kRefuse,
            absl::StrCat("Denied: this session is in plan mode (read and plan only; ",
                         call->tool == "bash" ? "commands run only inside the sandbox, which "
                                                "cannot start here or was asked to be left"
                                              : "nothing is changed",
                         "). Finish the plan and hand it over with present_plan.")};
  }
  if (IsEscalation(call->tool, args)) return DecideEscalation(mode, rules, args, call);
  const bool file_edit = call->tool == "write_file" || call->tool == "edit_file";
  if (mode == v1::POLICY_MODE_ACCEPT_EDITS) {
    // Edits that need nobody's special answer run; everything else is asked as in ask mode.
    if (file_edit && !call->protected_reason.has_value()) {
      return DecideCall(v1::POLICY_MODE_YES, rules, *call);
    }
    return DecideCall(v1::POLICY_MODE_ASK, rules, *call);
  }
  if (mode != v1::POLICY_MODE_AUTO) return DecideCall(mode, rules, *call);
  if (call->tool == "bash" && sandbox_confines) {
    // The sandbox keeps .agent/ and .git read-only: naming them needs nobody's answer here.
    CallFacts confined = *call;
    confined.protected_reason.reset();
    return DecideCall(v1::POLICY_MODE_YES, rules, confined);
  }
  if (file_edit && !call->protected_reason.has_value()) {
    return DecideCall(v1::POLICY_MODE_YES, rules, *call);
  }
  return DecideCall(v1::POLICY_MODE_ASK, rules, *call);
}

std::vector<std::string> ProposedRules(const std::string& tool, const Json& args,
                                       const CallFacts& call) {
  if (!IsEscalation(tool, args)) return policy::ProposePrefixRules(tool, call.rule_args);
  const std::string command = Command(args);
  // An escalation rule names exactly one command line, shown to the person as recorded.
  if (command.empty() || HasControlCharacter(command)) return {};
  return {policy::FormatRule(policy::Rule{kEscalationTool, command})};
}

std::vector<std::string> ExactRules(const std::string& tool, const Json& args,
                                    const CallFacts& call) {
  if (IsEscalation(tool, args)) return {};
  std::vector<std::string> exact = policy::ProposeRules(tool, call.rule_args);
  if (exact == policy::ProposePrefixRules(tool, call.rule_args)) return {};
  return exact;
}

}  // namespace agent::daemon
