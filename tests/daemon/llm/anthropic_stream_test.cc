#include "daemon/llm/anthropic_stream.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::RecordingSink;
using ::agent::daemon::llm::testing::StatusIs;
using ::testing::ElementsAre;

SseEvent Ev(const Json& data) { return SseEvent{GetString(data, "type"), DumpJson(data), ""}; }

Json MessageStart(int input_tokens) {
  return {{"type", "message_start"},
          {"message",
           {{"id", "msg_1"},
            {"role", "assistant"},
            {"content", Json::array()},
            {"stop_reason", nullptr},
            {"usage", {{"input_tokens", input_tokens}, {"output_tokens", 1}}}}}};
}
Json BlockStart(int index, const Json& block) {
  return {{"type", "content_block_start"}, {"index", index}, {"content_block", block}};
}
Json Delta(int index, const Json& delta) {
  return {{"type", "content_block_delta"}, {"index", index}, {"delta", delta}};
}
Json BlockStop(int index) { return {{"type", "content_block_stop"}, {"index", index}}; }
Json MessageDelta(const Json& stop_reason, int output_tokens) {
  return {{"type", "message_delta"},
          {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", nullptr}}},
          {"usage", {{"output_tokens", output_tokens}}}};
}
const Json kMessageStop = {{"type", "message_stop"}};

class AnthropicStream : public ::testing::Test {
 protected:
  void Feed(const Json& data) { ASSERT_TRUE(assembler_.OnEvent(Ev(data)).ok()) << data; }
  ModelReply FinishOk() {
    Feed(kMessageStop);
    absl::StatusOr<ModelReply> r = assembler_.Finish();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : ModelReply();
  }
  void TextReply(const std::string& stop_reason) {
    Feed(MessageStart(3));
    Feed(BlockStart(0, {{"type", "text"}, {"text", ""}}));
    Feed(Delta(0, {{"type", "text_delta"}, {"text", "x"}}));
    Feed(BlockStop(0));
    Feed(MessageDelta(stop_reason, 2));
  }

  RecordingSink sink_;
  AnthropicStreamAssembler assembler_{&sink_};
};

TEST_F(AnthropicStream, TextDeltasReachSinkAndContent) {
  Feed(MessageStart(10));
  Feed({{"type", "ping"}});
  Feed(BlockStart(0, {{"type", "text"}, {"text", ""}}));
  EXPECT_FALSE(assembler_.OutputStarted());
  Feed(Delta(0, {{"type", "text_delta"}, {"text", "Bon"}}));
  EXPECT_EQ(sink_.text(), "Bon");
  EXPECT_TRUE(assembler_.OutputStarted());
  Feed(Delta(0, {{"type", "text_delta"}, {"text", "jour ☕"}}));
  Feed(BlockStop(0));
  Feed(MessageDelta("end_turn", 5));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "Bonjour ☕");
  EXPECT_EQ(r.finish_reason, "stop");
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 10);
  EXPECT_EQ(r.usage->completion_tokens, 5);
  EXPECT_TRUE(r.provider_fields.empty());
}

TEST_F(AnthropicStream, InputJsonDeltasConcatenate) {
  Feed(MessageStart(1));
  Feed(BlockStart(
      0, {{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "bash"}, {"input", Json::object()}}));
  EXPECT_THAT(sink_.started(), ElementsAre("toolu_1|bash"));
  Feed(Delta(0, {{"type", "input_json_delta"}, {"partial_json", ""}}));
  Feed(Delta(0, {{"type", "input_json_delta"}, {"partial_json", "{\"command\": \"l"}}));
  Feed(Delta(0, {{"type", "input_json_delta"}, {"partial_json", "s\"}"}}));
  Feed(BlockStop(0));
  Feed(MessageDelta("tool_use", 9));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(r.tool_calls[0].name, "bash");
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"command\": \"ls\"}");
  EXPECT_EQ(r.finish_reason, "tool_calls");
}

TEST_F(AnthropicStream, ToolWithoutInputDeltasGetsEmptyObject) {
  Feed(MessageStart(1));
  Feed(BlockStart(
      0, {{"type", "tool_use"}, {"id", "t0"}, {"name", "now"}, {"input", Json::object()}}));
  Feed(BlockStop(0));
  Feed(BlockStart(
      1, {{"type", "tool_use"}, {"id", "t1"}, {"name", "now"}, {"input", Json::object()}}));
  Feed(Delta(1, {{"type", "input_json_delta"}, {"partial_json", ""}}));  // litellm#5063
  Feed(BlockStop(1));
  Feed(MessageDelta("tool_use", 3));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{}");
  EXPECT_EQ(r.tool_calls[1].arguments, "{}");
}

TEST_F(AnthropicStream, ToolInputGivenWholeAtBlockStart) {
  Feed(MessageStart(1));
  Feed(BlockStart(0, {{"type", "tool_use"}, {"id", "t"}, {"name", "ls"}, {"input", {{"p", "x"}}}}));
  Feed(MessageDelta("tool_use", 3));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"p":"x"})");
}

TEST_F(AnthropicStream, ThinkingAndSignatureKeptForSendingBack) {
  Feed(MessageStart(1));
  Feed(BlockStart(0, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}));
  Feed(Delta(0, {{"type", "thinking_delta"}, {"thinking", "Let me "}}));
  Feed(Delta(0, {{"type", "thinking_delta"}, {"thinking", "think."}}));
  Feed(Delta(0, {{"type", "signature_delta"}, {"signature", "SIG=="}}));
  Feed(BlockStop(0));
  Feed(BlockStart(1, {{"type", "redacted_thinking"}, {"data", "opaque"}}));
  Feed(BlockStop(1));
  Feed(BlockStart(2, {{"type", "text"}, {"text", ""}}));
  Feed(Delta(2, {{"type", "text_delta"}, {"text", "Done."}}));
  Feed(MessageDelta("end_turn", 4));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.reasoning, "Let me think.");
  EXPECT_EQ(sink_.reasoning(), "Let me think.");
  EXPECT_EQ(r.content, "Done.");
  const Json expected = Json::parse(R"([
    {"type":"thinking","thinking":"Let me think.","signature":"SIG=="},
    {"type":"redacted_thinking","data":"opaque"}])");
  EXPECT_EQ(r.provider_fields["anthropic_thinking"], expected);
}

TEST_F(AnthropicStream, PingAndUnknownEventsAndDeltasIgnored) {
  Feed(MessageStart(1));
  Feed({{"type", "ping"}});
  Feed({{"type", "brand_new_event"}, {"x", 1}});
  Feed(BlockStart(0, {{"type", "text"}, {"text", ""}}));
  Feed(Delta(0, {{"type", "citations_delta"}, {"citation", {{"type", "char_location"}}}}));
  Feed(Delta(0, {{"type", "future_delta"}, {"text", "NOT TEXT"}}));
  Feed(Delta(0, {{"type", "text_delta"}, {"text", "a"}}));
  Feed(BlockStart(1, {{"type", "server_tool_use"}, {"id", "srv"}, {"name", "web_search"}}));
  Feed(MessageDelta("end_turn", 2));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "a");
  EXPECT_TRUE(r.tool_calls.empty());
}

TEST_F(AnthropicStream, ErrorEventOverloadedIsUnavailable) {
  Feed(MessageStart(1));
  absl::Status s = assembler_.OnEvent(SseEvent{
      "error", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
      ""});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(s.message(), "Overloaded");
  EXPECT_THAT(assembler_.Finish().status(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(AnthropicStream, ErrorEventInvalidRequestIsInvalidArgument) {
  absl::Status s = assembler_.OnEvent(
      Ev({{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", "bad"}}}}));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(s.message(), "bad");
}

TEST_F(AnthropicStream, StopReasonMapping) {
  const std::pair<const char*, const char*> cases[] = {
      {"end_turn", "stop"},
      {"tool_use", "tool_calls"},
      {"max_tokens", "length"},
      {"stop_sequence", "stop"},
      {"pause_turn", "pause_turn"},
      {"refusal", "refusal"},
      {"model_context_window_exceeded", "model_context_window_exceeded"}};
  for (const auto& [in, out] : cases) {
    AnthropicStreamAssembler a(nullptr);
    for (const Json& e : {MessageStart(1), MessageDelta(in, 2), kMessageStop}) {
      ASSERT_TRUE(a.OnEvent(Ev(e)).ok());
    }
    absl::StatusOr<ModelReply> r = a.Finish();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->finish_reason, out) << in;
  }
}

TEST_F(AnthropicStream, OutputTokensAreCumulativeAndReplaced) {
  Feed(MessageStart(100));
  Feed(MessageDelta(nullptr, 10));
  Feed(MessageDelta("end_turn", 25));
  ModelReply r = FinishOk();
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->completion_tokens, 25);  // not 1 + 10 + 25
  EXPECT_EQ(r.usage->prompt_tokens, 100);
}

TEST_F(AnthropicStream, CachedPromptTokensCountTowardsPrompt) {
  Feed({{"type", "message_start"},
        {"message",
         {{"usage",
           {{"input_tokens", 4},
            {"cache_creation_input_tokens", 10},
            {"cache_read_input_tokens", 1000},
            {"output_tokens", 1}}}}}});
  Feed(MessageDelta("end_turn", 2));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.usage->prompt_tokens, 1014);
  EXPECT_EQ(r.usage->cached_tokens, 1000);     // the cache reads, a part of the prompt
  EXPECT_EQ(r.usage->cache_write_tokens, 10);  // the cache writes, another part
}

TEST_F(AnthropicStream, CutBeforeMessageStopIsIncomplete) {
  TextReply("end_turn");
  EXPECT_FALSE(assembler_.Complete());
  absl::StatusOr<ModelReply> r = assembler_.Finish();
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(r.status().message(), "stream ended before the reply was complete");
  EXPECT_TRUE(assembler_.OutputStarted());
}

TEST_F(AnthropicStream, MessageStopCompletes) {
  TextReply("end_turn");
  Feed(kMessageStop);
  EXPECT_TRUE(assembler_.Complete());
  EXPECT_TRUE(assembler_.Finish().ok());
}

TEST_F(AnthropicStream, MalformedChunkIsInternal) {
  absl::Status s = assembler_.OnEvent(SseEvent{"content_block_delta", "{\"type\":", ""});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(s.message(), "malformed chunk");
}

TEST_F(AnthropicStream, EventNameUsedWhenDataHasNoType) {
  ASSERT_TRUE(assembler_.OnEvent(SseEvent{"message_start", R"({"message":{}})", ""}).ok());
  ASSERT_TRUE(assembler_.OnEvent(SseEvent{"message_stop", "{}", ""}).ok());
  EXPECT_TRUE(assembler_.Complete());
}

TEST_F(AnthropicStream, TextBlocksAroundToolUseConcatenate) {
  Feed(MessageStart(1));
  Feed(BlockStart(0, {{"type", "text"}, {"text", "First. "}}));
  Feed(BlockStart(1,
                  {{"type", "tool_use"}, {"id", "t"}, {"name", "ls"}, {"input", Json::object()}}));
  Feed(BlockStart(2, {{"type", "text"}, {"text", ""}}));
  Feed(Delta(2, {{"type", "text_delta"}, {"text", "Second."}}));
  Feed(MessageDelta("tool_use", 3));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "First. Second.");
  EXPECT_EQ(r.tool_calls.size(), 1u);
}

// Caps (stream_assembler.h).
TEST(AnthropicStreamCap, TextOverTheCapEndsTheStream) {
  RecordingSink sink;
  AnthropicStreamAssembler a(&sink, kReplySlotBytes + 8);
  EXPECT_TRUE(a.OnEvent(Ev(MessageStart(1))).ok());
  EXPECT_TRUE(a.OnEvent(Ev(BlockStart(0, {{"type", "text"}, {"text", ""}}))).ok());
  EXPECT_TRUE(a.OnEvent(Ev(Delta(0, {{"type", "text_delta"}, {"text", "12345678"}}))).ok());
  absl::Status s = a.OnEvent(Ev(Delta(0, {{"type", "text_delta"}, {"text", "9"}})));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_NE(std::string(s.message()).find("kMaxReplyBytes"), std::string::npos);
  EXPECT_EQ(sink.text(), "12345678");
  EXPECT_THAT(a.Finish().status(), StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(AnthropicStreamCap, ToolInputAndThinkingCount) {
  AnthropicStreamAssembler a(nullptr, 2 * kReplySlotBytes + 30);
  EXPECT_TRUE(a.OnEvent(Ev(BlockStart(0, {{"type", "thinking"}, {"thinking", ""}}))).ok());
  // Thinking is kept twice (block and reasoning): 2 x 5 bytes.
  EXPECT_TRUE(a.OnEvent(Ev(Delta(0, {{"type", "thinking_delta"}, {"thinking", "abcde"}}))).ok());
  EXPECT_TRUE(a.OnEvent(Ev(BlockStart(
                            1, {{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", {}}})))
                  .ok());
  EXPECT_TRUE(
      a.OnEvent(Ev(Delta(1, {{"type", "input_json_delta"}, {"partial_json", "{\"a\":\"123"}})))
          .ok());
  EXPECT_THAT(
      a.OnEvent(Ev(Delta(1, {{"type", "input_json_delta"}, {"partial_json", "4567890123\"}"}}))),
      StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(AnthropicStreamCap, ManyEmptyBlocksHitTheCap) {
  AnthropicStreamAssembler a(nullptr, 100 * kReplySlotBytes);
  absl::Status s;
  for (int i = 0; i < 1000 && s.ok(); ++i) {
    s = a.OnEvent(Ev(BlockStart(i, {{"type", "text"}, {"text", ""}})));
  }
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(AnthropicStreamUtf8, RawInvalidBytesInTextArriveAsReplacementCharacters) {
  const std::string bytes =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"ok \xC0\xAF\"}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  testing::StreamRun run = testing::RunStream<AnthropicStreamAssembler>(bytes, {200, 201});
  ASSERT_FALSE(run.reply.contains("error")) << run.reply;
  EXPECT_EQ(run.reply["content"], "ok \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(run.sink_text, "ok \xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace agent::daemon::llm
