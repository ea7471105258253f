// The session's side of its CallGuard (call_guard.h): the mode, what the clients are told, the
// diff of an edit that ran unasked, and asking the attached clients, whose first answer wins
// (approval_gate.h).
#include <utility>

#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"

namespace agent::daemon {
namespace v1 = agent::v1;

v1::PolicyMode Session::Mode() {
  SessionMutexLock l(&mu_);
  return settings_.policy;
}

void Session::Tell(std::string text, bool error) {
  SessionMutexLock l(&mu_);
  if (error) {
    Emit(events::Error(text));
  } else {
    NoticeLocked(std::move(text));
  }
}

void Session::RememberDiff(const std::string& call_id, std::string diff) {
  SessionMutexLock l(&mu_);
  unasked_diffs_[call_id] = std::move(diff);
}

std::optional<ApprovalGate::Answer> Session::Ask(const v1::PendingApproval& approval) {
  SessionMutexLock l(&mu_);
  gate_.Open(approval);
  Emit(events::ApprovalRequested(approval));
  StartDeferredWritesLocked();  // the clients must see the request before the thread sleeps
  std::optional<ApprovalGate::Answer> answer = gate_.Await(&mu_, cancelled_);
  if (!answer.has_value()) {
    Emit(events::ApprovalResolved(approval.call_id(), v1::DECISION_DENY, "", "cancelled", {}));
    return std::nullopt;
  }
  Emit(events::ApprovalResolved(approval.call_id(), answer->decision, answer->client,
                                answer->reason, answer->rules));
  return answer;
}

}  // namespace agent::daemon
