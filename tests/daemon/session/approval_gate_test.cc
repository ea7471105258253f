#include "daemon/session/approval_gate.h"

#include <thread>

#include "daemon/session/answer_origin.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

ApprovalGate::Answer Answer(v1::Decision d) {
  ApprovalGate::Answer a;
  a.decision = d;
  return a;
}

v1::PendingApproval Approval(const std::string& call_id) {
  v1::PendingApproval a;
  a.set_call_id(call_id);
  a.add_proposed_rules("bash(make)");
  return a;
}

TEST(ApprovalGateTest, TheFirstAnswerWinsAndTheSecondIsRefused) {
  agent::Mutex mu;
  ApprovalGate gate;
  std::atomic<bool> cancelled{false};
  agent::MutexLock l(&mu);
  EXPECT_EQ(gate.pending(), nullptr);
  gate.Open(Approval("c1"));
  ASSERT_NE(gate.pending(), nullptr);
  EXPECT_TRUE(gate.Resolve("c1", {v1::DECISION_ALLOW_ONCE, {}, "", "alice"}).ok());
  EXPECT_EQ(gate.pending(), nullptr);  // answered: no longer shown as waiting
  EXPECT_TRUE(absl::IsFailedPrecondition(gate.Resolve("c1", {v1::DECISION_DENY, {}, "", "bob"})));
  auto answer = gate.Await(&mu, cancelled);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->client, "alice");
  EXPECT_EQ(answer->decision, v1::DECISION_ALLOW_ONCE);
}

TEST(ApprovalGateTest, AnswersForAnotherCallOrWithoutDecisionAreRefused) {
  ApprovalGate gate;
  EXPECT_TRUE(absl::IsFailedPrecondition(gate.Resolve("c1", Answer(v1::DECISION_ALLOW_ONCE))));
  gate.Open(Approval("c1"));
  EXPECT_TRUE(absl::IsFailedPrecondition(gate.Resolve("c2", Answer(v1::DECISION_ALLOW_ONCE))));
  EXPECT_TRUE(absl::IsInvalidArgument(gate.Resolve("c1", Answer(v1::DECISION_UNSPECIFIED))));
  EXPECT_NE(gate.pending(), nullptr);
}

TEST(ApprovalGateTest, AllowAlwaysWithoutRulesTakesTheProposedOnes) {
  agent::Mutex mu;
  ApprovalGate gate;
  std::atomic<bool> cancelled{false};
  agent::MutexLock l(&mu);
  gate.Open(Approval("c1"));
  ASSERT_TRUE(gate.Resolve("c1", Answer(v1::DECISION_ALLOW_ALWAYS)).ok());
  auto answer = gate.Await(&mu, cancelled);
  ASSERT_TRUE(answer.has_value());
  EXPECT_THAT(answer->rules, ::testing::ElementsAre("bash(make)"));
}

TEST(ApprovalGateTest, AWaiterWakesForAnAnswerFromAnotherThreadOrForACancel) {
  agent::Mutex mu;
  ApprovalGate gate;
  std::atomic<bool> cancelled{false};
  {
    agent::MutexLock l(&mu);
    gate.Open(Approval("c1"));
  }
  std::thread answerer([&] {
    agent::MutexLock l(&mu);
    ASSERT_TRUE(gate.Resolve("c1", {v1::DECISION_DENY, {}, "no", "bob"}).ok());
  });
  {
    agent::MutexLock l(&mu);
    auto answer = gate.Await(&mu, cancelled);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->reason, "no");
  }
  answerer.join();

  {
    agent::MutexLock l(&mu);
    gate.Open(Approval("c2"));
  }
  std::thread canceller([&] {
    agent::MutexLock l(&mu);
    cancelled = true;
    gate.Wake();
  });
  {
    agent::MutexLock l(&mu);
    EXPECT_FALSE(gate.Await(&mu, cancelled).has_value());
    EXPECT_EQ(gate.pending(), nullptr);
  }
  canceller.join();
}

TEST(ApprovalGateTest, AllowAlwaysRecordsOnlyRulesTheDaemonProposed) {
  ApprovalGate gate;
  gate.Open(Approval("c1"));
  EXPECT_TRUE(absl::IsInvalidArgument(
      gate.Resolve("c1", {v1::DECISION_ALLOW_ALWAYS, {"bash(*)"}, "", "api"})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      gate.Resolve("c1", {v1::DECISION_ALLOW_ALWAYS, {"bash(make)", "bash"}, "", "api"})));
  EXPECT_NE(gate.pending(), nullptr);  // still open for a valid answer
  EXPECT_TRUE(gate.Resolve("c1", {v1::DECISION_ALLOW_ALWAYS, {"bash(make)"}, "", "api"}).ok());
}

TEST(ApprovalGateTest, OnlyAPersonsAnswerAllowsACallThatRequiresAPerson) {
  v1::PendingApproval approval = Approval("c1");
  approval.set_requires_person(true);
  approval.set_person_reason("writes .git/hooks");
  ApprovalGate gate;
  gate.Open(approval);
  absl::Status s = gate.Resolve("c1", {v1::DECISION_ALLOW_ONCE, {}, "", "yes-client"});
  EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("writes .git/hooks"));
  EXPECT_TRUE(absl::IsPermissionDenied(
      gate.Resolve("c1", {v1::DECISION_ALLOW_ALWAYS, {}, "", "yes-client"})));
  EXPECT_NE(gate.pending(), nullptr);
  // A deny needs no person; an allow typed by one is taken.
  {
    PersonAnswerScope typed(true);
    EXPECT_TRUE(gate.Resolve("c1", {v1::DECISION_ALLOW_ONCE, {}, "", "terminal"}).ok());
  }
  gate.Open(approval);
  EXPECT_TRUE(gate.Resolve("c1", {v1::DECISION_DENY, {}, "no", "yes-client"}).ok());
}

}  // namespace
}  // namespace agent::daemon
