// The verdict on a gated call of a Session: the mode and the rules decide first
// (call_policy.h); when they leave it open, the attached clients are asked and the turn
// thread waits for the first answer (approval_gate.h).
#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/escalation.h"
#include "daemon/hooks/guard_verdict.h"
#include "daemon/policy/rules.h"
#include "daemon/session/call_policy.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"
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
  // Auto mode and escalations (daemon/escalation.h) depend on the sandbox.
  const bool confines = deps_.sandbox != nullptr && deps_.sandbox->Confines();
  CallVerdict verdict = DecideGatedCall(mode, rules, args, confines, &facts);
  // What the PreToolUse hooks said (hooks/guard_verdict.h): a deny rule still wins.
  verdict = hooks::ApplyGuard(verdict, guard, mode, facts.protected_reason.has_value());
  // A guard that failed never fails open: not under --yes either, only a person may allow it.
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
  auto preview = tools::PreviewGatedCall(call.name, args, MakeToolContext(call.id));
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
  tools::ToolContext ctx = MakeToolContext(call.id);
  auto preview = tools::PreviewGatedCall(call.name, args, ctx);
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

  std::optional<ApprovalGate::Answer> answer;
  {
    hooks_->Notify("permission_prompt", "agent needs your permission to use " + call.name);
    SessionMutexLock l(&mu_);
    gate_.Open(approval);
    Emit(events::ApprovalRequested(approval));
    StartDeferredWritesLocked();  // the clients must see the request before the thread sleeps
    answer = gate_.Await(&mu_, cancelled_);
    if (!answer.has_value()) {
      Emit(events::ApprovalResolved(call.id, v1::DECISION_DENY, "", "cancelled", {}));
      return tools::ToolOutcome{"Not run: cancelled by the user.", true};
    }
    Emit(events::ApprovalResolved(call.id, answer->decision, answer->client, answer->reason,
                                  answer->rules));
  }
  switch (answer->decision) {
    case v1::DECISION_ALLOW_ONCE:
      return std::nullopt;
    case v1::DECISION_ALLOW_ALWAYS:
      // The trust store and the settings file are written without the session's lock.
      if (auto s = RecordPersonsRules(answer->rules); !s.ok()) {
        SessionMutexLock l(&mu_);
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
