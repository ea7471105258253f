#include "client/view/turn_state.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(TurnStateTest, OneShotSkipsTheTurnsBeforeItsOwn) {
  TurnState t;
  t.turns_to_skip = 2;  // one running, one queued when we attached
  EXPECT_FALSE(t.OwnTurnEnds());
  EXPECT_FALSE(t.OwnTurnEnds());
  EXPECT_TRUE(t.OwnTurnEnds());
}

TEST(TurnStateTest, OnceOurTurnStartedItsEndIsOurs) {
  TurnState t;
  t.turns_to_skip = 3;
  t.own_turn_started = true;
  EXPECT_TRUE(t.OwnTurnEnds());
}

TEST(TurnStateTest, SwitchingSessionsForgetsTheOldOnesTurns) {
  TurnState t;
  t.session_id = "old";
  t.echoed.push_back({"hi", false});
  t.turns_waiting = 2;
  t.prompt_tokens = 10;
  t.SwitchedTo("new");
  EXPECT_EQ(t.session_id, "new");
  EXPECT_TRUE(t.echoed.empty());
  EXPECT_EQ(t.turns_waiting, 0);
  StatusInfo s = t.Status("me", true);
  EXPECT_EQ(s.session_id, "new");
  EXPECT_EQ(s.prompt_tokens, 10);
  EXPECT_EQ(s.own_client, "me");
  EXPECT_TRUE(s.read_only);
}

}  // namespace
}  // namespace agent::client
