#include "daemon/hooks/guard_verdict.h"

#include "gtest/gtest.h"

namespace agent::daemon::hooks {
namespace {

namespace v1 = agent::v1;
using K = CallVerdict::Kind;

ToolGuard Said(Permission p) {
  ToolGuard g;
  g.permission = p;
  g.reason = "because";
  return g;
}

ToolGuard Failed() {
  ToolGuard g;
  g.failed = true;
  g.failure = "PreToolUse hook `guard.sh` timed out after 1 s";
  return g;
}

const CallVerdict kAsk{K::kAsk, ""};
const CallVerdict kRun{K::kRun, ""};
const CallVerdict kRefused{K::kRefuse, "denied by rule bash(git push*)"};

TEST(GuardVerdictTest, AHookDenyRefusesWithItsReason) {
  CallVerdict v = ApplyGuard(kRun, Said(Permission::kDeny), v1::POLICY_MODE_YES, false);
  EXPECT_EQ(v.kind, K::kRefuse);
  EXPECT_NE(v.refusal.find("because"), std::string::npos);
}

TEST(GuardVerdictTest, ADenyRuleWinsOverAHookAllow) {
  EXPECT_EQ(ApplyGuard(kRefused, Said(Permission::kAllow), v1::POLICY_MODE_ASK, false).refusal,
            kRefused.refusal);
}

TEST(GuardVerdictTest, AHookAllowRunsWithoutAQuestionExceptProtectedPaths) {
  EXPECT_EQ(ApplyGuard(kAsk, Said(Permission::kAllow), v1::POLICY_MODE_ASK, false).kind, K::kRun);
  EXPECT_EQ(ApplyGuard(kAsk, Said(Permission::kAllow), v1::POLICY_MODE_ASK, true).kind, K::kAsk);
}

TEST(GuardVerdictTest, AFailedGuardAsksAPersonNeverFailsOpen) {
  // Even where the rules or --yes would have run it.
  EXPECT_EQ(ApplyGuard(kRun, Failed(), v1::POLICY_MODE_YES, false).kind, K::kAsk);
  EXPECT_EQ(ApplyGuard(kAsk, Failed(), v1::POLICY_MODE_ASK, false).kind, K::kAsk);
  // Nobody may be asked: refused, naming the failure.
  CallVerdict v = ApplyGuard(kRun, Failed(), v1::POLICY_MODE_DENY_UNRULED, false);
  EXPECT_EQ(v.kind, K::kRefuse);
  EXPECT_NE(v.refusal.find("timed out"), std::string::npos);
}

TEST(GuardVerdictTest, AHookAskAsks) {
  EXPECT_EQ(ApplyGuard(kRun, Said(Permission::kAsk), v1::POLICY_MODE_ASK, false).kind, K::kAsk);
}

TEST(GuardVerdictTest, NoOpinionChangesNothing) {
  EXPECT_EQ(ApplyGuard(kRun, ToolGuard{}, v1::POLICY_MODE_ASK, false).kind, K::kRun);
  EXPECT_EQ(ApplyGuard(kAsk, ToolGuard{}, v1::POLICY_MODE_ASK, false).kind, K::kAsk);
}

}  // namespace
}  // namespace agent::daemon::hooks
