#include "client/text/json_events.h"

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

TEST(JsonEventsTest, EveryEventLineHasItsType) {
  v1::Event e;
  e.mutable_text_delta()->set_text("hi");
  EXPECT_EQ((*ParseJson(EventJsonLine(e)))["type"], Json("text_delta"));
  e.mutable_tool_result()->set_call_id("c1");
  EXPECT_EQ((*ParseJson(EventJsonLine(e)))["type"], Json("tool_result"));
  e.mutable_turn_ended();
  EXPECT_EQ((*ParseJson(EventJsonLine(e)))["type"], Json("turn_ended"));
}

TEST(JsonEventsTest, ToolArgumentsAreObjectsNotTextInAString) {
  v1::Event e;
  v1::ToolCall* c = e.mutable_tool_call_ready()->mutable_call();
  c->set_name("bash");
  c->set_arguments(R"({"command":"ls -l","timeout":5})");
  absl::StatusOr<Json> j = ParseJson(EventJsonLine(e));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["tool_call_ready"]["call"]["arguments"]["command"], Json("ls -l"));
  EXPECT_EQ((*j)["tool_call_ready"]["call"]["arguments"]["timeout"], Json(5));

  v1::Event m;
  m.mutable_assistant_message()->add_tool_calls()->set_arguments(R"({"path":"a.txt"})");
  m.mutable_assistant_message()->add_tool_calls()->set_arguments(R"({"path": "b)");  // cut off
  j = ParseJson(EventJsonLine(m));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["assistant_message"]["tool_calls"][0]["arguments"]["path"], Json("a.txt"));
  EXPECT_EQ((*j)["assistant_message"]["tool_calls"][1]["arguments"], Json(R"({"path": "b)"));
}

TEST(JsonEventsTest, CostsAreRoundedToAHundredthOfACent) {
  EXPECT_EQ(RoundedCost(0.011328000000000001), 0.0113);
  EXPECT_EQ(RoundedCost(0), 0);
  v1::Event e;
  e.mutable_usage()->set_cost_usd(0.011328000000000001);
  std::string line = EventJsonLine(e);
  EXPECT_NE(line.find("\"cost_usd\":0.0113"), std::string::npos) << line;
  TurnResult r;
  r.ended.mutable_usage()->set_cost_usd(1.23456789);
  line = ResultJsonLine(r);
  EXPECT_NE(line.find("\"total_cost_usd\":1.2346"), std::string::npos) << line;
}

TEST(JsonEventsTest, SessionStartedIsShortAndNamesTheSession) {
  v1::Event e;
  e.set_seq(7);
  e.set_epoch("ep");
  v1::Snapshot* s = e.mutable_snapshot();
  s->set_transcript_json(std::string(10000, 'x'));
  s->mutable_session()->set_id("abc123");
  s->mutable_session()->set_workdir("/p");
  std::string line = SessionStartedJsonLine(e);
  EXPECT_LT(line.size(), 300u);
  absl::StatusOr<Json> j = ParseJson(line);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["type"], Json("session_started"));
  EXPECT_EQ((*j)["session_id"], Json("abc123"));
  EXPECT_EQ((*j)["seq"], Json(7));
  EXPECT_EQ((*j)["workdir"], Json("/p"));
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
