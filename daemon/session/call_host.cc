// The session's side of its CallGuard (call_guard.h), TurnRunner's: the mode, what the clients
// are told, the diff of an edit that ran unasked, and asking the attached clients, whose first
// answer wins (approval_gate.h).
#include <utility>

#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/turn_runner.h"

namespace agent::daemon {
namespace v1 = agent::v1;

v1::PolicyMode TurnRunner::Mode() {
  SessionMutexLock l(&s_.mu_);
  return s_.settings_.policy;
}

void TurnRunner::Tell(std::string text, bool error) {
  SessionMutexLock l(&s_.mu_);
  if (error) {
    s_.Emit(events::Error(text));
  } else {
    s_.NoticeLocked(std::move(text));
  }
}

void TurnRunner::RememberDiff(const std::string& call_id, std::string diff) {
  SessionMutexLock l(&s_.mu_);
  unasked_diffs_[call_id] = std::move(diff);
}

std::optional<ApprovalGate::Answer> TurnRunner::Ask(const v1::PendingApproval& approval) {
  SessionMutexLock l(&s_.mu_);
  s_.gate_.Open(approval);
  s_.Emit(events::ApprovalRequested(approval));
  s_.StartDeferredWritesLocked();  // the clients must see the request before the thread sleeps
  std::optional<ApprovalGate::Answer> answer = s_.gate_.Await(&s_.mu_, s_.cancelled_);
  if (!answer.has_value()) {
    s_.Emit(events::ApprovalResolved(approval.call_id(), v1::DECISION_DENY, "", "cancelled", {}));
    return std::nullopt;
  }
  s_.Emit(events::ApprovalResolved(approval.call_id(), answer->decision, answer->client,
                                   answer->reason, answer->rules));
  return answer;
}

}  // namespace agent::daemon
