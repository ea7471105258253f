// The verdict on a gated call of a Session: the mode and the rules decide first
// (call_policy.h); when they leave it open, the attached clients are asked and the turn
// thread waits for the first answer (approval_gate.h).
#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/call_policy.h"
#include "daemon/deferred_writes.h"
#include "daemon/hooks/guard_verdict.h"
#include "daemon/policy/rules.h"
#include "daemon/session.h"
#include "daemon/session_events.h"
#include "daemon/tools/change_preview.h"

namespace agent::daemon {
namespace v1 = agent::v1;

std::optional<tools::ToolOutcome> Session::Authorize(const llm::ToolCall& call, const Json& args) {
  return AuthorizeGuarded(call, args, hooks::ToolGuard{});
}

std::optional<tools::ToolOutcome> Session::AuthorizeGuarded(const llm::ToolCall& call,
                                                            const Json& args,
                                                            const hooks::ToolGuard& guard) {
  absl::StatusOr<policy::RuleSet> rules = rules_->Rules();
  v1::PolicyMode mode;
  {
    SessionMutexLock l(&mu_);
    mode = settings_.policy;
    // Every refused call names the problem to the model; the people attached see it once.
    if (!rules.ok() && rules.status().message() != rules_error_shown_) {
      rules_error_shown_ = std::string(rules.status().message());
      Emit(events::Error(absl::StrCat("gated tools are stopped: ", rules_error_shown_)));
    }
  }
  CallFacts facts = GatherCallFacts(workdir_, call.name, args);
  CallVerdict verdict = hooks::ApplyGuard(DecideCall(mode, rules, facts), guard, mode,
                                          facts.protected_reason.has_value());
  // A guard that failed never fails open: not --yes either, only a person may allow the call.
  if (guard.failed && !facts.protected_reason) {
    facts.protected_reason = absl::StrCat("a hook guarding this call failed: ", guard.failure);
  }
  if (verdict.kind == CallVerdict::Kind::kAsk) {
    verdict = PermissionHooks(call, args, facts.protected_reason.has_value());
  }
  switch (verdict.kind) {
    case CallVerdict::Kind::kRun:
      RememberUnaskedDiff(call, args);
      return std::nullopt;
    case CallVerdict::Kind::kRefuse:
      return tools::ToolOutcome{verdict.refusal, true, /*denied_by_policy=*/true};
    case CallVerdict::Kind::kAsk:
      break;
  }
  return AskClients(call, args, facts);
}

void Session::RememberUnaskedDiff(const llm::ToolCall& call, const Json& args) {
  constexpr size_t kMaxDiff = 64 << 10;
  if (call.name != "write_file" && call.name != "edit_file") return;
  auto preview = tools::PreviewGatedCall(call.name, args, MakeContext(call.id));
  if (!preview.ok() || preview->diff.empty()) return;
  std::string diff = std::move(preview->diff);
  if (diff.size() > kMaxDiff) {
    diff.resize(diff.rfind('\n', kMaxDiff) + 1);
    diff += "\\ (diff cut)\n";
  }
  SessionMutexLock l(&mu_);
  unasked_diffs_[call.id] = std::move(diff);
}

std::optional<tools::ToolOutcome> Session::AskClients(const llm::ToolCall& call, const Json& args,
                                                      const CallFacts& facts) {
  tools::ToolContext ctx = MakeContext(call.id);
  auto preview = tools::PreviewGatedCall(call.name, args, ctx);
  if (!preview.ok()) return tools::ToolOutcome{std::string(preview.status().message()), true};
  v1::PendingApproval approval;
  approval.set_call_id(call.id);
  approval.set_tool(call.name);
  approval.set_summary(preview->summary);
  approval.set_diff(preview->diff);
  for (std::string& r : policy::ProposeRules(call.name, facts.rule_args)) {
    approval.add_proposed_rules(std::move(r));
  }
  if (facts.protected_reason.has_value()) {
    approval.set_requires_person(true);
    approval.set_person_reason(*facts.protected_reason);
  }

  SessionMutexLock l(&mu_);
  hooks_->Notify("permission_prompt", "agent needs your permission to use " + call.name);
  gate_.Open(approval);
  Emit(events::ApprovalRequested(approval));
  StartDeferredWritesLocked();  // the clients must see the request before the thread sleeps
  std::optional<ApprovalGate::Answer> answer = gate_.Await(&mu_, cancelled_);
  if (!answer.has_value()) {
    Emit(events::ApprovalResolved(call.id, v1::DECISION_DENY, "", "cancelled", {}));
    return tools::ToolOutcome{"Not run: cancelled by the user.", true};
  }
  Emit(events::ApprovalResolved(call.id, answer->decision, answer->client, answer->reason,
                                answer->rules));
  switch (answer->decision) {
    case v1::DECISION_ALLOW_ONCE:
      return std::nullopt;
    case v1::DECISION_ALLOW_ALWAYS:
      if (auto s = RecordPersonsRules(answer->rules); !s.ok()) {
        Emit(events::Error(absl::StrCat("cannot record the rule: ", s.message())));
      }
      return std::nullopt;
    default:
      return tools::ToolOutcome{answer->reason.empty()
                                    ? "The user denied this call."
                                    : absl::StrCat("The user denied this call: ", answer->reason),
                                true};
  }
}

}  // namespace agent::daemon
