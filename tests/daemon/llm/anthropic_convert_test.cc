#include "daemon/llm/anthropic_convert.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

Json J(const char* text) { return Json::parse(text); }

const char* kTools = R"([{"type":"function","function":{"name":"read_file",
  "description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},
  "required":["path"]}}}, {"type":"function","function":{"name":"now"}}])";

TEST(AnthropicConvert, SystemMessagesJoinedIntoTopLevelSystem) {
  Json req = BuildAnthropicRequest("claude", J(R"([
    {"role":"system","content":"You are terse."},
    {"role":"user","content":"hi"},
    {"role":"system","content":[{"type":"text","text":"Summary so far."}]}])"),
                                   Json::array(), 1024, true);
  EXPECT_EQ(req["system"], "You are terse.\n\nSummary so far.");
  EXPECT_EQ(req["model"], "claude");
  EXPECT_EQ(req["max_tokens"], 1024);
  EXPECT_EQ(req["stream"], true);
  ASSERT_EQ(req["messages"].size(), 1u);
  EXPECT_EQ(req["messages"][0], J(R"({"role":"user","content":[{"type":"text","text":"hi"}]})"));
  EXPECT_FALSE(req.contains("tools"));
}

TEST(AnthropicConvert, ToolCallsBecomeToolUseWithParsedInput) {
  Json req = BuildAnthropicRequest("m", J(R"([
    {"role":"user","content":"read it"},
    {"role":"assistant","content":"Reading.","tool_calls":[
      {"id":"toolu_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.rs\"}"}},
      {"id":"toolu_2","type":"function","function":{"name":"now","arguments":""}}]}])"),
                                   Json::array(), 100, false);
  const Json& assistant = req["messages"][1];
  EXPECT_EQ(assistant["role"], "assistant");
  EXPECT_EQ(assistant["content"], J(R"([
    {"type":"text","text":"Reading."},
    {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.rs"}},
    {"type":"tool_use","id":"toolu_2","name":"now","input":{}}])"));
}

TEST(AnthropicConvert, UnparsableArgumentsKeptAsRawText) {
  Json req = BuildAnthropicRequest("m", J(R"([
    {"role":"user","content":"x"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"t","type":"function","function":{"name":"write_file","arguments":"{\"content\": \"cut"}}]}])"),
                                   Json::array(), 100, false);
  EXPECT_EQ(req["messages"][1]["content"][0]["input"],
            J(R"({"_unparsed_arguments":"{\"content\": \"cut"})"));
  Json back = OpenAiMessagesFromAnthropic(req);
  EXPECT_EQ(back[1]["tool_calls"][0]["function"]["arguments"], "{\"content\": \"cut");
}

TEST(AnthropicConvert, ThinkingBlocksPutBackFirst) {
  Json req = BuildAnthropicRequest("m", J(R"([
    {"role":"user","content":"x"},
    {"role":"assistant","content":"ok","reasoning_content":"hidden",
     "anthropic_thinking":[{"type":"thinking","thinking":"hmm","signature":"S1"},
                           {"type":"redacted_thinking","data":"R"}],
     "tool_calls":[{"id":"t","type":"function","function":{"name":"now","arguments":"{}"}}]}])"),
                                   Json::array(), 100, false);
  const Json& content = req["messages"][1]["content"];
  ASSERT_EQ(content.size(), 4u);
  EXPECT_EQ(content[0], J(R"({"type":"thinking","thinking":"hmm","signature":"S1"})"));
  EXPECT_EQ(content[1], J(R"({"type":"redacted_thinking","data":"R"})"));
  EXPECT_EQ(content[2]["type"], "text");
  EXPECT_EQ(content[3]["type"], "tool_use");
  EXPECT_FALSE(req["messages"][1].contains("reasoning_content"));
}

TEST(AnthropicConvert, ConsecutiveToolMessagesBecomeOneUserMessage) {
  Json req = BuildAnthropicRequest("m", J(R"([
    {"role":"user","content":"x"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"a","type":"function","function":{"name":"now","arguments":"{}"}},
      {"id":"b","type":"function","function":{"name":"now","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"a","content":"12:00"},
    {"role":"tool","tool_call_id":"b","content":""},
    {"role":"user","content":"thanks"}])"),
                                   Json::array(), 100, false);
  ASSERT_EQ(req["messages"].size(), 3u);
  EXPECT_EQ(req["messages"][2], J(R"({"role":"user","content":[
    {"type":"tool_result","tool_use_id":"a","content":"12:00"},
    {"type":"tool_result","tool_use_id":"b"},
    {"type":"text","text":"thanks"}]})"));
}

TEST(AnthropicConvert, ConsecutiveSameRoleMessagesMerged) {
  Json req = BuildAnthropicRequest("m", J(R"([
    {"role":"user","content":"one"}, {"role":"user","content":"two"},
    {"role":"assistant","content":"a"}, {"role":"assistant","content":""},
    {"role":"assistant","content":"b"}])"),
                                   Json::array(), 100, false);
  ASSERT_EQ(req["messages"].size(), 2u);
  EXPECT_EQ(req["messages"][0]["content"].size(), 2u);
  EXPECT_EQ(req["messages"][1]["content"],
            J(R"([{"type":"text","text":"a"},{"type":"text","text":"b"}])"));
}

TEST(AnthropicConvert, ImagePartsBecomeImageBlocks) {
  Json req = BuildAnthropicRequest("m", J(R"([{"role":"user","content":[
    {"type":"text","text":"look"},
    {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},
    {"type":"image_url","image_url":{"url":"https://x/y.png"}}]}])"),
                                   Json::array(), 100, false);
  EXPECT_EQ(
      req["messages"][0]["content"][1],
      J(R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}})"));
  EXPECT_EQ(req["messages"][0]["content"][2],
            J(R"({"type":"image","source":{"type":"url","url":"https://x/y.png"}})"));
}

TEST(AnthropicConvert, ToolSchemasConverted) {
  Json req =
      BuildAnthropicRequest("m", J(R"([{"role":"user","content":"x"}])"), J(kTools), 100, false);
  EXPECT_EQ(req["tools"], J(R"([
    {"name":"read_file","description":"Read a file","input_schema":{"type":"object",
      "properties":{"path":{"type":"string"}},"required":["path"]}},
    {"name":"now","input_schema":{"type":"object"}}])"));
}

TEST(AnthropicConvert, RoundTripGivesBackTheTranscript) {
  const Json transcript = J(R"([
    {"role":"system","content":"You are a coding agent."},
    {"role":"user","content":"Fix the build — 日本語 please"},
    {"role":"assistant","content":"Looking.",
     "anthropic_thinking":[{"type":"thinking","thinking":"check files","signature":"Sig1"}],
     "tool_calls":[
       {"id":"toolu_A","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"CMakeLists.txt\"}"}},
       {"id":"toolu_B","type":"function","function":{"name":"now","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"toolu_A","content":"project x"},
    {"role":"tool","tool_call_id":"toolu_B","content":"12:00"},
    {"role":"assistant","content":null,"tool_calls":[
       {"id":"toolu_C","type":"function","function":{"name":"bash","arguments":"{\"command\":\"make\"}"}}]},
    {"role":"tool","tool_call_id":"toolu_C","content":"ok"},
    {"role":"user","content":"and?"},
    {"role":"assistant","content":"Done."}])");
  Json req = BuildAnthropicRequest("m", transcript, J(kTools), 4096, true);
  EXPECT_EQ(OpenAiMessagesFromAnthropic(req), transcript);
}

TEST(AnthropicConvert, InverseAcceptsStringContent) {
  Json back = OpenAiMessagesFromAnthropic(J(R"({"system":[{"type":"text","text":"S"}],
    "messages":[{"role":"user","content":"plain"},{"role":"assistant","content":"reply"}]})"));
  EXPECT_EQ(back, J(R"([{"role":"system","content":"S"},{"role":"user","content":"plain"},
    {"role":"assistant","content":"reply"}])"));
}

}  // namespace
}  // namespace agent::daemon::llm
