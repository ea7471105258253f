#include "daemon/call_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using K = CallVerdict::Kind;
using ::testing::HasSubstr;

policy::RuleSet Rules(std::vector<std::string> allow, std::vector<std::string> deny) {
  policy::RuleSet r;
  for (auto& a : allow) r.allow.push_back(*policy::ParseRule(a));
  for (auto& d : deny) r.deny.push_back(*policy::ParseRule(d));
  return r;
}

const Json kMake = {{"command", "make"}};

TEST(CallPolicyTest, ModesAndRules) {
  auto none = Rules({}, {});
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_ASK, none, "bash", kMake).kind, K::kAsk);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, none, "bash", kMake).kind, K::kRun);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_READ_ONLY, Rules({"bash"}, {}), "bash", kMake).kind,
            K::kRefuse);
  auto unruled = DecideCall(v1::POLICY_MODE_DENY_UNRULED, none, "bash", kMake);
  EXPECT_EQ(unruled.kind, K::kRefuse);
  EXPECT_THAT(unruled.refusal, HasSubstr("--yes"));
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_DENY_UNRULED, Rules({"bash(make)"}, {}), "bash", kMake).kind,
            K::kRun);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_ASK, Rules({"bash"}, {"bash(make)"}), "bash", kMake).kind,
            K::kRefuse);
}

TEST(CallPolicyTest, RuleArgumentsAreRelativeToTheWorkdir) {
  Json args = {{"path", "/w/src/a.cc"}, {"content", "x"}};
  EXPECT_EQ(RuleArguments("/w", args)["path"], "src/a.cc");
  EXPECT_EQ(RuleArguments("/w", {{"path", "/other/a.cc"}})["path"], "/other/a.cc");
  EXPECT_EQ(RuleArguments("/w", kMake), kMake);
}

}  // namespace
}  // namespace agent::daemon
