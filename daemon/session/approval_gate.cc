#include "daemon/session/approval_gate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/session/answer_origin.h"

namespace agent::daemon {

namespace v1 = agent::v1;

const v1::PendingApproval* ApprovalGate::pending() const {
  return open_.has_value() && !answer_.has_value() ? &*open_ : nullptr;
}

void ApprovalGate::Open(v1::PendingApproval approval) {
  open_ = std::move(approval);
  answer_.reset();
}

std::optional<ApprovalGate::Answer> ApprovalGate::Await(agent::Mutex* mu,
                                                        const std::atomic<bool>& cancelled) {
  while (!answer_.has_value() && !cancelled) cv_.Wait(mu);
  std::optional<Answer> answer = std::move(answer_);
  if (answer.has_value() && answer->decision == v1::DECISION_ALLOW_ALWAYS &&
      answer->rules.empty()) {
    answer->rules.assign(open_->proposed_rules().begin(), open_->proposed_rules().end());
  }
  open_.reset();
  answer_.reset();
  return answer;
}

// Besides what the header says: InvalidArgument for an "always" rule the daemon did not propose
// for this call, PermissionDenied for an allow of a call that requires a person without a
// person's answer (answer_origin.h). The daemon checks both, whatever the client did.
absl::Status ApprovalGate::Resolve(const std::string& call_id, Answer answer) {
  if (pending() == nullptr || open_->call_id() != call_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("no approval pending for call ", call_id, " (already answered?)"));
  }
  if (answer.decision == v1::DECISION_UNSPECIFIED) {
    return absl::InvalidArgumentError("decision missing");
  }
  const bool allows = answer.decision != v1::DECISION_DENY;
  // What needs a person is checked here, whatever the client did (daemon/session/answer_origin.h).
  if (allows && open_->requires_person() && !PersonAnswerScope::Current()) {
    return absl::PermissionDeniedError(
        absl::StrCat("only a person may allow this call (", open_->person_reason(),
                     "): answer it at the agent's prompt in a terminal"));
  }
  if (answer.decision == v1::DECISION_ALLOW_ALWAYS) {
    // The API chooses among the rules the daemon proposed; it cannot invent `bash(*)`.
    const auto& proposed = open_->proposed_rules();
    const auto& exact = open_->exact_rules();
    for (const std::string& r : answer.rules) {
      if (std::find(proposed.begin(), proposed.end(), r) == proposed.end() &&
          std::find(exact.begin(), exact.end(), r) == exact.end()) {
        std::vector<std::string> all(proposed.begin(), proposed.end());
        all.insert(all.end(), exact.begin(), exact.end());
        return absl::InvalidArgumentError(absl::StrCat(
            "rule ", r, " was not proposed for this call (proposed: ", absl::StrJoin(all, ", "),
            "); /allow adds a rule of your own"));
      }
    }
  }
  answer_ = std::move(answer);
  cv_.SignalAll();
  return absl::OkStatus();
}

}  // namespace agent::daemon
