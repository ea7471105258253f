#include "daemon/llm/responses_stream.h"

#include <string>
#include <vector>

#include "daemon/llm/request_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::RecordingSink;
using ::agent::daemon::llm::testing::RunStream;
using ::agent::daemon::llm::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Sse(const Json& data) {
  return "event: " + GetString(data, "type") + "\ndata: " + DumpJson(data) + "\n\n";
}

Json Added(int index, const Json& item) {
  return {{"type", "response.output_item.added"}, {"output_index", index}, {"item", item}};
}
Json Done(int index, const Json& item) {
  return {{"type", "response.output_item.done"}, {"output_index", index}, {"item", item}};
}
Json TextDelta(const std::string& item, const std::string& delta) {
  return {{"type", "response.output_text.delta"},
          {"item_id", item},
          {"output_index", 1},
          {"content_index", 0},
          {"delta", delta}};
}
Json SummaryDelta(const std::string& item, int summary_index, const std::string& delta) {
  return {{"type", "response.reasoning_summary_text.delta"},
          {"item_id", item},
          {"output_index", 0},
          {"summary_index", summary_index},
          {"delta", delta}};
}
Json ArgsDelta(int index, const std::string& delta) {
  return {{"type", "response.function_call_arguments.delta"},
          {"item_id", "fc_" + std::to_string(index)},
          {"output_index", index},
          {"delta", delta}};
}
Json FunctionItem(int index, const std::string& call_id, const std::string& name,
                  const std::string& arguments) {
  return {{"type", "function_call"}, {"id", "fc_" + std::to_string(index)},
          {"call_id", call_id},      {"name", name},
          {"arguments", arguments},  {"status", arguments.empty() ? "in_progress" : "completed"}};
}
const Json kReasoningItem = {
    {"type", "reasoning"},
    {"id", "rs_1"},
    {"summary", Json::array({{{"type", "summary_text"}, {"text", "Plan: look."}},
                             {{"type", "summary_text"}, {"text", "Then read."}}})},
    {"encrypted_content", "gAAAA-opaque=="}};

Json Completed(const std::string& type, const Json& extra = Json::object()) {
  Json response = {{"id", "resp_1"},
                   {"status", type == "response.completed" ? "completed" : "incomplete"},
                   {"usage",
                    {{"input_tokens", 2000},
                     {"input_tokens_details", {{"cached_tokens", 1536}}},
                     {"output_tokens", 40},
                     {"output_tokens_details", {{"reasoning_tokens", 12}}},
                     {"total_tokens", 2040}}}};
  response.update(extra);
  return {{"type", type}, {"response", response}};
}

// A reply with reasoning (two summary parts), text and two calls, arguments in fragments.
std::string FullStream() {
  std::string s;
  s += Sse({{"type", "response.created"}, {"response", {{"id", "resp_1"}}}});
  s += Sse(Added(0, {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", Json::array()}}));
  s += Sse(SummaryDelta("rs_1", 0, "Plan: "));
  s += Sse(SummaryDelta("rs_1", 0, "look."));
  s += Sse(SummaryDelta("rs_1", 1, "Then read."));
  s += Sse(Done(0, kReasoningItem));
  s += Sse(Added(1, {{"type", "message"}, {"id", "msg_1"}, {"role", "assistant"}}));
  s += Sse(TextDelta("msg_1", "Reading "));
  s += Sse(TextDelta("msg_1", "both ½ → ok."));
  s += Sse(Done(1, {{"type", "message"},
                    {"id", "msg_1"},
                    {"content",
                     Json::array({{{"type", "output_text"}, {"text", "Reading both ½ → ok."}}})}}));
  s += Sse(Added(2, FunctionItem(2, "call_a", "read_file", "")));
  s += Sse(ArgsDelta(2, "{\"pa"));
  s += Sse(ArgsDelta(2, "th\":\"a."));
  s += Sse(ArgsDelta(2, "txt\"}"));
  s += Sse({{"type", "response.function_call_arguments.done"},
            {"item_id", "fc_2"},
            {"output_index", 2},
            {"arguments", "{\"path\":\"a.txt\"}"}});
  s += Sse(Done(2, FunctionItem(2, "call_a", "read_file", "{\"path\":\"a.txt\"}")));
  s += Sse(Added(3, FunctionItem(3, "call_b", "list_dir", "")));
  s += Sse(ArgsDelta(3, "{}"));
  s += Sse(Done(3, FunctionItem(3, "call_b", "list_dir", "{}")));
  s += Sse(Completed("response.completed"));
  return s;
}

TEST(ResponsesStream, AssemblesTextReasoningCallsAndUsage) {
  RecordingSink sink;
  ResponsesStreamAssembler a(&sink);
  SseParser parser;
  std::vector<SseEvent> events;
  parser.Feed(FullStream(), &events);
  for (const SseEvent& ev : events) ASSERT_TRUE(a.OnEvent(ev).ok()) << ev.data;
  EXPECT_TRUE(a.Complete());
  absl::StatusOr<ModelReply> r = a.Finish();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, "Reading both ½ → ok.");
  EXPECT_EQ(r->reasoning, "Plan: look.\n\nThen read.");
  EXPECT_EQ(sink.text(), r->content);
  EXPECT_EQ(sink.reasoning(), r->reasoning);
  EXPECT_THAT(sink.started(), ElementsAre("call_a|read_file", "call_b|list_dir"));
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[0].id, "call_a");
  EXPECT_EQ(r->tool_calls[0].arguments, "{\"path\":\"a.txt\"}");
  EXPECT_EQ(r->tool_calls[1].id, "call_b");
  EXPECT_EQ(r->tool_calls[1].arguments, "{}");
  EXPECT_EQ(r->finish_reason, "tool_calls");
  ASSERT_TRUE(r->usage.has_value());
  EXPECT_EQ(r->usage->prompt_tokens, 2000);
  EXPECT_EQ(r->usage->completion_tokens, 40);
  EXPECT_EQ(r->usage->cached_tokens, 1536);
  // The reasoning item is kept as sent, for the next request; the transcript message has it.
  EXPECT_EQ(r->provider_fields["openai_reasoning"], Json::array({kReasoningItem}));
  const Json msg = AssistantMessageFromReply(*r);
  EXPECT_EQ(msg["openai_reasoning"][0]["encrypted_content"], "gAAAA-opaque==");
}

TEST(ResponsesStream, TheModelAskedForIsRecordedWithTheReasoning) {
  ResponsesStreamAssembler a(nullptr, kMaxReplyBytes, "gpt-x");
  SseParser parser;
  std::vector<SseEvent> events;
  parser.Feed(FullStream(), &events);
  for (const SseEvent& ev : events) ASSERT_TRUE(a.OnEvent(ev).ok());
  absl::StatusOr<ModelReply> r = a.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->provider_fields["openai_reasoning_model"], "gpt-x");
}

TEST(ResponsesStream, EverySplitGivesTheSameReply) {
  const std::string bytes = FullStream();
  const testing::StreamRun whole = RunStream<ResponsesStreamAssembler>(bytes, {});
  ASSERT_FALSE(whole.reply.contains("error")) << whole.reply;
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    const testing::StreamRun split = RunStream<ResponsesStreamAssembler>(bytes, {cut});
    ASSERT_EQ(split.reply, whole.reply) << "cut at " << cut;
    ASSERT_EQ(split.sink_text, whole.sink_text) << "cut at " << cut;
    ASSERT_EQ(split.sink_started, whole.sink_started) << "cut at " << cut;
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < bytes.size(); ++i) every.push_back(i);
  EXPECT_EQ(RunStream<ResponsesStreamAssembler>(bytes, every).reply, whole.reply);
}

TEST(ResponsesStream, IncompleteForMaxOutputTokensIsLengthAndTheLastCallIsCut) {
  std::string s;
  s += Sse(Added(0, FunctionItem(0, "call_x", "write_file", "")));
  s += Sse(ArgsDelta(0, "{\"path\":\"a\",\"content\":\"ha"));
  s += Sse(Completed("response.incomplete",
                     {{"incomplete_details", {{"reason", "max_output_tokens"}}}}));
  const testing::StreamRun run = RunStream<ResponsesStreamAssembler>(s, {});
  EXPECT_EQ(run.reply["finish_reason"], "length");
  ASSERT_EQ(run.reply["tool_calls"].size(), 1u);
  EXPECT_EQ(run.reply["tool_calls"][0]["arguments"], "{\"path\":\"a\",\"content\":\"ha");

  ModelReply reply;
  reply.finish_reason = "length";
  reply.tool_calls.push_back(ToolCall{});
  EXPECT_TRUE(reply.LastCallTruncated());
}

TEST(ResponsesStream, FailedIsClassifiedLikeChat) {
  auto failed = [](const std::string& code, const std::string& message) {
    return Sse({{"type", "response.failed"},
                {"response",
                 {{"id", "resp_1"},
                  {"status", "failed"},
                  {"error", {{"code", code}, {"message", message}}}}}});
  };
  EXPECT_EQ(RunStream<ResponsesStreamAssembler>(failed("server_error", "try again"), {}).reply,
            (Json{{"error", {{"code", "UNAVAILABLE"}, {"message", "try again"}}}}));
  EXPECT_EQ(RunStream<ResponsesStreamAssembler>(failed("rate_limit_exceeded", "slow"), {})
                .reply["error"]["code"],
            "UNAVAILABLE");
  EXPECT_EQ(RunStream<ResponsesStreamAssembler>(failed("invalid_prompt", "bad"), {})
                .reply["error"]["code"],
            "INVALID_ARGUMENT");
}

TEST(ResponsesStream, ErrorEventIsClassified) {
  const std::string overloaded = Sse({{"type", "error"},
                                      {"code", "server_error"},
                                      {"message", "The server had an error"},
                                      {"param", nullptr},
                                      {"sequence_number", 3}});
  EXPECT_EQ(RunStream<ResponsesStreamAssembler>(overloaded, {}).reply["error"]["code"],
            "UNAVAILABLE");
  const std::string bad = Sse({{"type", "error"},
                               {"code", "invalid_request_error"},
                               {"message", "No tool output found for function call call_x."}});
  const Json reply = RunStream<ResponsesStreamAssembler>(bad, {}).reply;
  EXPECT_EQ(reply["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("call_x"));
}

TEST(ResponsesStream, WithoutCompletionTheStreamIsUnfinished) {
  ResponsesStreamAssembler a(nullptr);
  ASSERT_TRUE(a.OnEvent({"", DumpJson(TextDelta("m", "hi")), ""}).ok());
  EXPECT_TRUE(a.OutputStarted());
  EXPECT_FALSE(a.Complete());
  EXPECT_THAT(a.Finish().status(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST(ResponsesStream, MalformedDataFails) {
  ResponsesStreamAssembler a(nullptr);
  EXPECT_THAT(a.OnEvent({"", "{not json", ""}), StatusIs(absl::StatusCode::kInternal));
}

TEST(ResponsesStream, TextOnlyInTheDoneItemsIsTaken) {
  // A server that sends whole items without deltas still gives the text and the summary.
  std::string s;
  s += Sse(Done(0, kReasoningItem));
  s += Sse(Done(1, {{"type", "message"},
                    {"id", "msg_9"},
                    {"content", Json::array({{{"type", "output_text"}, {"text", "hello"}}})}}));
  s += Sse(Completed("response.completed"));
  const testing::StreamRun run = RunStream<ResponsesStreamAssembler>(s, {});
  EXPECT_EQ(run.reply["content"], "hello");
  EXPECT_EQ(run.reply["reasoning"], "Plan: look.\n\nThen read.");
  EXPECT_EQ(run.reply["finish_reason"], "stop");
}

TEST(ResponsesStream, DeltasWithoutItemIdsAreNotRepeatedByTheDoneItem) {
  std::string s;
  s += Sse({{"type", "response.output_text.delta"}, {"delta", "hello"}});
  s += Sse(Done(0, {{"type", "message"},
                    {"id", "msg_1"},
                    {"content", Json::array({{{"type", "output_text"}, {"text", "hello"}}})}}));
  s += Sse(Completed("response.completed"));
  EXPECT_EQ(RunStream<ResponsesStreamAssembler>(s, {}).reply["content"], "hello");
}

TEST(ResponsesStream, CallsWithoutIdsGetUniqueOnes) {
  std::string s;
  s += Sse(Added(0, {{"type", "function_call"}, {"name", "a"}, {"arguments", ""}}));
  s += Sse(Added(1, FunctionItem(1, "dup", "b", "{}")));
  s += Sse(Added(2, FunctionItem(2, "dup", "c", "{}")));
  s += Sse(Completed("response.completed"));
  const Json calls = RunStream<ResponsesStreamAssembler>(s, {}).reply["tool_calls"];
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_FALSE(calls[0]["id"].get<std::string>().empty());
  EXPECT_EQ(calls[1]["id"], "dup");
  EXPECT_NE(calls[2]["id"], "dup");
  EXPECT_EQ(calls[0]["arguments"], "{}");
}

TEST(ResponsesStream, ArgumentsOverTheCapEndTheReply) {
  ResponsesStreamAssembler a(nullptr, /*max_reply_bytes=*/1024);
  ASSERT_TRUE(a.OnEvent({"", DumpJson(Added(0, FunctionItem(0, "c", "f", ""))), ""}).ok());
  absl::Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) {
    s = a.OnEvent({"", DumpJson(ArgsDelta(0, std::string(100, 'x'))), ""});
  }
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(a.Finish().status(), StatusIs(absl::StatusCode::kResourceExhausted));
}

}  // namespace
}  // namespace agent::daemon::llm
