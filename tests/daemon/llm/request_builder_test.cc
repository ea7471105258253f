#include "daemon/llm/request_builder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

Json J(const char* text) { return Json::parse(text); }

TEST(RequestBuilder, StreamingAddsIncludeUsage) {
  Json req =
      BuildOpenAiRequest("gpt", J(R"([{"role":"user","content":"hi"}])"), Json::array(), true);
  EXPECT_EQ(req["model"], "gpt");
  EXPECT_EQ(req["stream"], true);
  EXPECT_EQ(req["stream_options"], J(R"({"include_usage":true})"));
  EXPECT_FALSE(req.contains("tools"));  // an empty tools array is rejected by some servers
}

TEST(RequestBuilder, NoStreamOptionsWhenNotStreaming) {
  Json req = BuildOpenAiRequest("gpt", Json::array(), Json::array(), false);
  EXPECT_EQ(req["stream"], false);
  EXPECT_FALSE(req.contains("stream_options"));
}

TEST(RequestBuilder, ToolsPassedThrough) {
  const Json tools =
      J(R"([{"type":"function","function":{"name":"ls","parameters":{"type":"object"}}}])");
  EXPECT_EQ(BuildOpenAiRequest("m", Json::array(), tools, true)["tools"], tools);
}

TEST(RequestBuilder, StripsAnthropicThinkingAndReasoningContentByDefault) {
  const Json messages = J(R"([{"role":"user","content":"x"},
    {"role":"assistant","content":"a","reasoning_content":"r","anthropic_thinking":[{"type":"thinking"}],
     "openai_reasoning":[{"type":"reasoning","id":"rs_1","encrypted_content":"e"}],
     "tool_calls":[{"id":"c","type":"function","function":{"name":"ls","arguments":"{}"},
                    "extra_content":{"google":{"thought_signature":"s"}}}]}])");
  Json req = BuildOpenAiRequest("m", messages, Json::array(), true);
  const Json& a = req["messages"][1];
  EXPECT_FALSE(a.contains("reasoning_content"));
  EXPECT_FALSE(a.contains("anthropic_thinking"));
  EXPECT_FALSE(a.contains("openai_reasoning"));
  EXPECT_EQ(a["tool_calls"], messages[1]["tool_calls"]);   // Gemini's signature goes back
  EXPECT_TRUE(messages[1].contains("reasoning_content"));  // the transcript is untouched
}

TEST(RequestBuilder, ReasoningContentSentWhenAsked) {
  const Json messages = J(R"([{"role":"assistant","content":"a","reasoning_content":"r"}])");
  OpenAiRequestOptions options;
  options.send_reasoning_content = true;
  Json req = BuildOpenAiRequest("m", messages, Json::array(), true, options);
  EXPECT_EQ(req["messages"][0]["reasoning_content"], "r");
}

TEST(RequestBuilder, RefusalBecomesContentWhenThereIsNoOther) {
  Json req = BuildOpenAiRequest("m", J(R"([{"role":"assistant","content":null,"refusal":"No."},
                 {"role":"assistant","content":"text","refusal":"No."}])"),
                                Json::array(), false);
  EXPECT_EQ(req["messages"][0], J(R"({"role":"assistant","content":"No."})"));
  EXPECT_EQ(req["messages"][1], J(R"({"role":"assistant","content":"text"})"));
}

TEST(RequestBuilder, AssistantMessageFromTextReply) {
  ModelReply r;
  r.content = "Hello";
  r.finish_reason = "stop";
  EXPECT_EQ(AssistantMessageFromReply(r), J(R"({"role":"assistant","content":"Hello"})"));
}

TEST(RequestBuilder, AssistantMessageFromToolCallReply) {
  ModelReply r;
  r.reasoning = "think";
  r.tool_calls.push_back({"call_1", "read_file", "{\"path\":\"a\"}",
                          J(R"({"extra_content":{"google":{"thought_signature":"s"}}})")});
  r.tool_calls.push_back({"call_2", "now", "{}", Json::object()});
  r.provider_fields["anthropic_thinking"] =
      J(R"([{"type":"thinking","thinking":"t","signature":"x"}])");
  r.provider_fields["content"] = "must not override";
  EXPECT_EQ(AssistantMessageFromReply(r), J(R"({"role":"assistant","content":null,
    "reasoning_content":"think",
    "anthropic_thinking":[{"type":"thinking","thinking":"t","signature":"x"}],
    "tool_calls":[
      {"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"},
       "extra_content":{"google":{"thought_signature":"s"}}},
      {"id":"call_2","type":"function","function":{"name":"now","arguments":"{}"}}]})"));
}

TEST(RequestBuilder, AssistantMessageWithTextAndCallsKeepsText) {
  ModelReply r;
  r.content = "Reading.";
  r.refusal = "partly";
  r.tool_calls.push_back({"c", "ls", "{}", Json::object()});
  Json m = AssistantMessageFromReply(r);
  EXPECT_EQ(m["content"], "Reading.");
  EXPECT_EQ(m["refusal"], "partly");
}

TEST(RequestBuilder, EmptyReplyHasEmptyStringContent) {
  EXPECT_EQ(AssistantMessageFromReply(ModelReply()), J(R"({"role":"assistant","content":""})"));
}

}  // namespace
}  // namespace agent::daemon::llm
