// ApprovalGate: the one approval a session may have pending, and the first-answer-wins
// protocol around it. The turn thread opens an approval and waits; any client's Approve
// answers it; a cancel ends the wait unanswered.
//
// Thread-safety: none of its own. A Session holds its gate ABSL_GUARDED_BY the session's
// mutex, so every method runs with that mutex held; Await releases it while it waits.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"

namespace agent::daemon {

class ApprovalGate {
 public:
  struct Answer {
    agent::v1::Decision decision = agent::v1::DECISION_UNSPECIFIED;
    std::vector<std::string> rules;  // for ALLOW_ALWAYS: the proposed rules when none given
    std::string reason;
    std::string client;
  };

  // The approval the clients are asked about; nullptr when none is waiting for an answer.
  const agent::v1::PendingApproval* pending() const;

  // Makes `approval` the pending one. At most one is open at a time (the turn thread asks).
  void Open(agent::v1::PendingApproval approval);
  // Waits until the open approval is answered or `cancelled` is set (then nullopt); either
  // way the approval is closed when it returns.
  std::optional<Answer> Await(agent::Mutex* mu, const std::atomic<bool>& cancelled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // From Approve: FailedPrecondition when no approval with that id is open (another client
  // answered first), InvalidArgument for a missing decision.
  absl::Status Resolve(const std::string& call_id, Answer answer);
  // Wakes a waiting Await so it can see a cancel.
  void Wake() { cv_.SignalAll(); }

 private:
  std::optional<agent::v1::PendingApproval> open_;
  std::optional<Answer> answer_;
  agent::CondVar cv_;
};

}  // namespace agent::daemon
