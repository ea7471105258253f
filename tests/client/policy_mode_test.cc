#include "client/text/policy_mode.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

TEST(PolicyModeTest, EveryModeAPersonMayChooseRoundTripsThroughItsName) {
  for (v1::PolicyMode m :
       {v1::POLICY_MODE_ASK, v1::POLICY_MODE_YES, v1::POLICY_MODE_AUTO,
        v1::POLICY_MODE_ACCEPT_EDITS, v1::POLICY_MODE_READ_ONLY, v1::POLICY_MODE_PLAN}) {
    EXPECT_EQ(ParsePolicyMode(PolicyModeName(m)), m) << PolicyModeName(m);
  }
  EXPECT_EQ(ParsePolicyMode("accept-edits"), v1::POLICY_MODE_ACCEPT_EDITS);
  EXPECT_EQ(ParsePolicyMode("Edits"), v1::POLICY_MODE_ACCEPT_EDITS);
  EXPECT_EQ(ParsePolicyMode("deny-unruled"), std::nullopt);  // the one-shot's, not a person's
  EXPECT_EQ(ParsePolicyMode("everything"), std::nullopt);
}

TEST(PolicyModeTest, TheStrictestFlagWins) {
  EXPECT_EQ(ModeFromFlags({}, v1::POLICY_MODE_DENY_UNRULED), v1::POLICY_MODE_DENY_UNRULED);
  EXPECT_EQ(ModeFromFlags({.accept_edits = true}, v1::POLICY_MODE_ASK),
            v1::POLICY_MODE_ACCEPT_EDITS);
  EXPECT_EQ(ModeFromFlags({.accept_edits = true, .yes = true}, v1::POLICY_MODE_ASK),
            v1::POLICY_MODE_ACCEPT_EDITS);
  EXPECT_EQ(ModeFromFlags({.auto_mode = true, .accept_edits = true}, v1::POLICY_MODE_ASK),
            v1::POLICY_MODE_AUTO);
  EXPECT_EQ(ModeFromFlags({.read_only = true, .yes = true}, v1::POLICY_MODE_ASK),
            v1::POLICY_MODE_READ_ONLY);
  EXPECT_EQ(ModeFromFlags({.yes = true}, v1::POLICY_MODE_ASK), v1::POLICY_MODE_YES);
  // Plan mode is stricter than every mode that runs something unasked.
  EXPECT_EQ(ModeFromFlags({.auto_mode = true, .plan = true}, v1::POLICY_MODE_ASK),
            v1::POLICY_MODE_PLAN);
  EXPECT_EQ(ModeFromFlags({.read_only = true, .plan = true}, v1::POLICY_MODE_ASK),
            v1::POLICY_MODE_READ_ONLY);
}

}  // namespace
}  // namespace agent::client
