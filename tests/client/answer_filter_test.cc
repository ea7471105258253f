#include "client/view/answer_filter.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

v1::Event Delta(const std::string& text) {
  v1::Event e;
  e.mutable_text_delta()->set_text(text);
  return e;
}
v1::Event Reply(int calls) {
  v1::Event e;
  v1::AssistantMessage* m = e.mutable_assistant_message();
  for (int i = 0; i < calls; ++i) m->add_tool_calls()->set_name("bash");
  return e;
}

TEST(AnswerFilterTest, OnlyTheReplyWithoutToolCallsIsTheAnswer) {
  AnswerFilter f;
  EXPECT_EQ(f.OnEvent(Delta("Let me look")).answer, "");
  v1::Event started;
  started.mutable_tool_call_started()->set_name("bash");
  AnswerFilter::Out out = f.OnEvent(started);
  EXPECT_EQ(out.narration, "Let me look\n");
  EXPECT_EQ(out.answer, "");
  EXPECT_EQ(f.OnEvent(Reply(1)).narration, "");  // said already
  f.OnEvent(Delta("The summary"));
  f.OnEvent(Delta(" is short."));
  out = f.OnEvent(Reply(0));
  EXPECT_EQ(out.answer, "The summary is short.\n");
  EXPECT_EQ(out.narration, "");
  v1::Event ended;
  ended.mutable_turn_ended();
  EXPECT_EQ(f.OnEvent(ended).answer, "");
}

TEST(AnswerFilterTest, ARetriedAttemptsTextIsDroppedAndAnEndedTurnKeepsWhatCame) {
  AnswerFilter f;
  f.OnEvent(Delta("half an ans"));
  v1::Event retry;
  retry.mutable_retrying()->set_attempt(1);
  f.OnEvent(retry);
  f.OnEvent(Delta("a whole answer, then cancelled\n"));
  v1::Event ended;
  ended.mutable_turn_ended()->set_outcome(v1::TURN_OUTCOME_CANCELLED);
  EXPECT_EQ(f.OnEvent(ended).answer, "a whole answer, then cancelled\n");
}

}  // namespace
}  // namespace agent::client
