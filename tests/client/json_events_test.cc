#include "client/json_events.h"

#include "common/json.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

TEST(JsonEventsTest, SixtyFourBitIntegersAreNumbers) {
  v1::Event e;
  e.set_seq(12345678901234);
  e.set_epoch("e1");
  e.set_unix_ms(1700000000000);
  v1::TurnEnded* t = e.mutable_turn_ended();
  t->set_outcome(v1::TURN_OUTCOME_DONE);
  t->set_duration_ms(1500);
  t->mutable_usage()->set_prompt_tokens(1234);
  t->mutable_usage()->set_requests(2);
  absl::StatusOr<Json> j = ParseJson(EventJsonLine(e));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["seq"], Json(12345678901234));
  EXPECT_EQ((*j)["unix_ms"], Json(1700000000000));
  EXPECT_EQ((*j)["turn_ended"]["duration_ms"], Json(1500));
  EXPECT_EQ((*j)["turn_ended"]["usage"]["prompt_tokens"], Json(1234));
  EXPECT_EQ((*j)["turn_ended"]["usage"]["requests"], Json(2));
  EXPECT_EQ((*j)["turn_ended"]["outcome"], Json("TURN_OUTCOME_DONE"));
}

TEST(JsonEventsTest, AStringOfDigitsStaysAString) {
  v1::Event e;
  e.mutable_text_delta()->set_text("12345");
  absl::StatusOr<Json> j = ParseJson(EventJsonLine(e));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["text_delta"]["text"], Json("12345"));
}

TEST(JsonEventsTest, TheResultLineHasOutcomeTextSessionUsageAndDuration) {
  TurnResult r;
  r.ended.set_outcome(v1::TURN_OUTCOME_DONE);
  r.ended.set_duration_ms(42);
  r.ended.mutable_usage()->set_prompt_tokens(10);
  r.ended.mutable_usage()->set_completion_tokens(5);
  r.final_text = "All done.";
  r.session_id = "s1";
  absl::StatusOr<Json> j = ParseJson(ResultJsonLine(r));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["type"], Json("result"));
  EXPECT_EQ((*j)["subtype"], Json("success"));
  EXPECT_EQ((*j)["is_error"], Json(false));
  EXPECT_EQ((*j)["outcome"], Json("done"));
  EXPECT_EQ((*j)["result"], Json("All done."));
  EXPECT_EQ((*j)["session_id"], Json("s1"));
  EXPECT_EQ((*j)["duration_ms"], Json(42));
  EXPECT_EQ((*j)["usage"]["prompt_tokens"], Json(10));
  EXPECT_EQ((*j)["usage"]["completion_tokens"], Json(5));
  EXPECT_FALSE(j->contains("error"));
}

TEST(JsonEventsTest, AFailedTurnsResultIsAnErrorWithItsReason) {
  TurnResult r;
  r.ended.set_outcome(v1::TURN_OUTCOME_ERROR);
  r.ended.set_error("model said no");
  r.exit_code = 1;
  absl::StatusOr<Json> j = ParseJson(ResultJsonLine(r));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["is_error"], Json(true));
  EXPECT_EQ((*j)["subtype"], Json("error_during_execution"));
  EXPECT_EQ((*j)["error"], Json("model said no"));
  EXPECT_EQ((*j)["exit_code"], Json(1));
}

}  // namespace
}  // namespace agent::client
