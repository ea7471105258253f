#include "daemon/session/call_guard.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/hooks/guard_verdict.h"
#include "daemon/policy/escalation.h"
#include "daemon/policy/personal_rules.h"
#include "daemon/policy/rules.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/tools/bash_request.h"
#include "daemon/tools/change_preview.h"
#include "daemon/tools/tool_input.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

constexpr size_t kMaxDiff = 64 << 10;  // of an unasked edit's diff, shown with its result

}  // namespace

CallGuard::CallGuard(Host* host, std::string workdir, policy::RuleSource* rules,
                     hooks::SessionHooks* hooks, bool confines)
    : host_(host),
      workdir_(std::move(workdir)),
      rules_(rules),
      hooks_(hooks),
      confines_(confines) {}

std::optional<tools::ToolOutcome> CallGuard::Before(const llm::ToolCall& call,
                                                    const tools::Tool& tool, Json* args) {
  hooks::ToolGuard guard = hooks_->BeforeTool(call.name, *args, call.id);
  if (guard.updated_input.has_value() && guard.permission != hooks::Permission::kDeny) {
    Json updated = *args;
    if (guard.updated_input->is_object()) {
      for (auto& [k, v] : guard.updated_input->items()) updated[k] = v;
    }
    absl::StatusOr<Json> checked = tools::CheckToolInput(tool, std::move(updated));
    if (!checked.ok()) {
      return tools::ToolOutcome{
          absl::StrCat("Not run: a PreToolUse hook changed the input into one the tool does "
                       "not take: ",
                       checked.status().message()),
          true};
    }
    *args = *std::move(checked);
    host_->Tell(
        absl::StrCat("a PreToolUse hook changed the input of ", call.name, " (", call.id, ")"),
        /*error=*/false);
  }
  if (tool.Gated()) return Decide(call, *args, guard);
  // A call that is never asked about (read-only): a hook's ask or failure refuses it.
  if (guard.permission == hooks::Permission::kDeny || guard.permission == hooks::Permission::kAsk ||
      guard.failed) {
    CallVerdict v = hooks::ApplyGuard({}, guard, v1::POLICY_MODE_DENY_UNRULED, false);
    return tools::ToolOutcome{v.refusal, true, /*denied_by_policy=*/true};
  }
  return std::nullopt;
}

void CallGuard::After(const llm::ToolCall& call, const Json& args, tools::ToolOutcome* outcome) {
  std::string note =
      hooks_->AfterTool(call.name, args, call.id, outcome->content, outcome->is_error);
  if (!note.empty()) absl::StrAppend(&outcome->content, "\n\n[PostToolUse hook]\n", note);
}

std::optional<tools::ToolOutcome> CallGuard::Decide(const llm::ToolCall& call, const Json& args,
                                                    const hooks::ToolGuard& guard) {
  absl::StatusOr<policy::RuleSet> rules = rules_->Rules();
  const v1::PolicyMode mode = host_->Mode();
  if (!rules.ok()) {
    // Every refused call names the problem to the model; the people attached see it once.
    bool tell = false;
    {
      agent::MutexLock l(&mu_);
      if (rules.status().message() != rules_error_shown_) {
        rules_error_shown_ = std::string(rules.status().message());
        tell = true;
      }
    }
    if (tell) {
      host_->Tell(absl::StrCat("gated tools are stopped: ", rules.status().message()),
                  /*error=*/true);
    }
  }
  CallFacts facts = GatherCallFacts(workdir_, call.name, args);
  const CallFacts gathered = facts;  // as read from the call: the verdict below may narrow it
  // In a run that cannot ask (deny-unruled), the user's own hook's allow answers for the person
  // who is not there, as it would where one is: decided as in ask mode, so that deny rules,
  // protected paths and escalations still refuse; what would still need a person is refused as
  // before. A project's hook runs files the model can rewrite: its allow does not count here.
  const bool hook_answers = mode == v1::POLICY_MODE_DENY_UNRULED &&
                            guard.permission == hooks::Permission::kAllow && guard.user_allow;
  const v1::PolicyMode decide_mode = hook_answers ? v1::POLICY_MODE_ASK : mode;
  CallVerdict verdict = DecideGatedCall(decide_mode, rules, args, confines_, &facts);
  // What the PreToolUse hooks said (hooks/guard_verdict.h): a deny rule still wins.
  verdict = hooks::ApplyGuard(verdict, guard, decide_mode, facts.protected_reason.has_value());
  if (hook_answers && verdict.kind == CallVerdict::Kind::kAsk) {
    CallFacts again = GatherCallFacts(workdir_, call.name, args);
    verdict = DecideGatedCall(mode, rules, args, confines_, &again);
  }
  // A guard that failed never fails open: not under --yes either, only a person may allow it.
  if (guard.failed && !facts.protected_reason) {
    facts.protected_reason = absl::StrCat("a hook guarding this call failed: ", guard.failure);
  }
  if (verdict.kind == CallVerdict::Kind::kAsk) {
    verdict = PermissionHooks(call, args, facts.protected_reason.has_value());
  }
  switch (verdict.kind) {
    case CallVerdict::Kind::kRun:
      TellAllowingRules(args, mode, rules, gathered);
      RememberUnaskedDiff(call, args);
      return std::nullopt;
    case CallVerdict::Kind::kRefuse:
      return tools::ToolOutcome{verdict.refusal, true, /*denied_by_policy=*/true};
    case CallVerdict::Kind::kAsk:
      break;
  }
  return AskPerson(call, args, facts);
}

CallVerdict CallGuard::PermissionHooks(const llm::ToolCall& call, const Json& args,
                                       bool protected_path) {
  using K = CallVerdict::Kind;
  if (protected_path) return {K::kAsk, ""};  // only a person may allow it
  hooks::ToolGuard guard = hooks_->OnPermissionRequest(call.name, args, call.id);
  if (guard.failed) return {K::kAsk, ""};
  switch (guard.permission) {
    case hooks::Permission::kAllow:
      return {K::kRun, ""};
    case hooks::Permission::kDeny:
      return hooks::ApplyGuard({}, guard, v1::POLICY_MODE_ASK, false);
    default:
      return {K::kAsk, ""};
  }
}

void CallGuard::TellAllowingRules(const Json& args, v1::PolicyMode mode,
                                  const absl::StatusOr<policy::RuleSet>& rules,
                                  const CallFacts& facts) {
  if (!rules.ok() || rules->allow.empty() || mode == v1::POLICY_MODE_YES) return;
  policy::RuleSet no_allow;
  no_allow.deny = rules->deny;
  CallFacts without = facts;
  if (DecideGatedCall(mode, no_allow, args, confines_, &without).kind == CallVerdict::Kind::kRun) {
    return;  // the mode runs it anyway: no rule made the difference
  }
  std::vector<std::string> by = policy::AllowingRules(*rules, facts.tool, facts.rule_args);
  if (by.empty()) return;  // a hook's allow, not a rule
  host_->Tell(absl::StrCat("allowed by ", absl::StrJoin(by, ", ")), /*error=*/false);
}

void CallGuard::RememberUnaskedDiff(const llm::ToolCall& call, const Json& args) {
  if (call.name != "write_file" && call.name != "edit_file") return;
  auto preview = tools::PreviewGatedCall(call.name, args, host_->MakeToolContext(call.id));
  if (!preview.ok() || preview->diff.empty()) return;
  std::string diff = std::move(preview->diff);
  if (diff.size() > kMaxDiff) {
    diff.resize(diff.rfind('\n', kMaxDiff) + 1);
    diff += "\\ (diff cut)\n";
  }
  host_->RememberDiff(call.id, std::move(diff));
}

std::optional<tools::ToolOutcome> CallGuard::AskPerson(const llm::ToolCall& call, const Json& args,
                                                       const CallFacts& facts) {
  auto preview = tools::PreviewGatedCall(call.name, args, host_->MakeToolContext(call.id));
  if (!preview.ok()) return tools::ToolOutcome{std::string(preview.status().message()), true};
  v1::PendingApproval approval;
  approval.set_call_id(call.id);
  approval.set_tool(call.name);
  approval.set_summary(preview->summary);
  approval.set_diff(preview->diff);
  for (std::string& r : ProposedRules(call.name, args, facts)) {
    approval.add_proposed_rules(std::move(r));
  }
  for (std::string& r : ExactRules(call.name, args, facts)) approval.add_exact_rules(std::move(r));
  if (facts.protected_reason.has_value()) {
    approval.set_requires_person(true);
    approval.set_person_reason(*facts.protected_reason);
  }
  if (IsEscalation(call.name, args)) {
    approval.set_escalation(true);
    if (absl::StatusOr<tools::BashRequest> r = tools::ReadBashRequest(args); r.ok()) {
      approval.set_justification(r->justification);
    }
  }
  hooks_->Notify("permission_prompt", "agent needs your permission to use " + call.name);
  std::optional<ApprovalGate::Answer> answer = host_->Ask(approval);
  if (!answer.has_value()) return tools::ToolOutcome{"Not run: cancelled by the user.", true};
  switch (answer->decision) {
    case v1::DECISION_ALLOW_ONCE:
      return std::nullopt;
    case v1::DECISION_ALLOW_ALWAYS:
      if (absl::Status s = RecordPersonsRules(answer->rules); !s.ok()) {
        host_->Tell(absl::StrCat("cannot record the rule: ", s.message()), /*error=*/true);
      }
      return std::nullopt;
    default:
      return tools::ToolOutcome{answer->reason.empty()
                                    ? "The user denied this call."
                                    : absl::StrCat("The user denied this call: ", answer->reason),
                                true};
  }
}

absl::Status CallGuard::RecordPersonsRules(const std::vector<std::string>& rules) const {
  // A person chose these rules: the same rules in the project's own settings are trusted too
  // (no notice about them again). Both stores are in the user's state directory, bound to this
  // project directory: nothing in the checkout is created or changed.
  if (absl::StatusOr<std::vector<std::string>> trusted =
          policy::TrustRules(policy::TrustedRulesPath(), workdir_, rules);
      !trusted.ok()) {
    return trusted.status();
  }
  return policy::RecordPersonalAllowRules(workdir_, rules).status();
}

}  // namespace agent::daemon
