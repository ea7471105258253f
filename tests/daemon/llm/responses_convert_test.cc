#include "daemon/llm/responses_convert.h"

#include <set>
#include <string>

#include "common/transcript.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/request_builder.h"
#include "daemon/llm/request_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

Json Call(const std::string& id, const std::string& name, const std::string& args) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}

Json Tools() {
  return Json::array(
      {{{"type", "function"},
        {"function",
         {{"name", "read_file"},
          {"description", "Reads a file."},
          {"parameters",
           {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}}}});
}

const Json kReasoning = {{"type", "reasoning"},
                         {"id", "rs_7"},
                         {"summary", Json::array({{{"type", "summary_text"}, {"text", "hm"}}})},
                         {"encrypted_content", "ENC-7"}};

// A turn with reasoning, parallel calls and their results, as the turn loop stores it.
Transcript TurnWithCalls() {
  Transcript t;
  EXPECT_TRUE(t.AppendSystem("You are a coding agent.").ok());
  EXPECT_TRUE(t.AppendUser("read a.txt and b.txt").ok());
  Json a1 = {{"role", "assistant"},
             {"content", "Reading both."},
             {"reasoning_content", "hm"},
             {"openai_reasoning", Json::array({kReasoning})},
             {"tool_calls", Json::array({Call("c1", "read_file", "{\"path\":\"a.txt\"}"),
                                         Call("c2", "read_file", "{\"path\":\"b.txt\"}")})}};
  EXPECT_TRUE(t.AppendAssistant(a1).ok());
  EXPECT_TRUE(t.AppendToolResult("c1", "alpha\n").ok());
  EXPECT_TRUE(t.AppendToolResult("c2", "beta\n").ok());
  return t;
}

std::string Body(const Transcript& t, const std::string& provider, RequestCache* cache) {
  ModelRequest r;
  r.settings = ModelSettings{"http://127.0.0.1:1/v1", "k", "gpt-x", provider, ""};
  r.tools = Tools();
  r.cache_key = "session-1";
  if (cache != nullptr) {
    r.prepared = std::make_shared<const PreparedMessages>(
        cache->Prepare(t, *ParseProvider(provider), OpenAiOptionsFor(r.settings)));
  } else {
    r.messages = t.messages();
  }
  absl::StatusOr<WireRequest> w = BuildWireRequest(r);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? w->body.Text() : "";
}

TEST(ResponsesConvert, RequestShape) {
  ModelRequest r;
  r.settings = ModelSettings{"https://api.openai.com/v1", "sk-1", "gpt-x", "openai-responses", ""};
  r.messages = TurnWithCalls().messages();
  r.tools = Tools();
  r.cache_key = "session-1";
  absl::StatusOr<WireRequest> w = BuildWireRequest(r);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->provider, Provider::kOpenAiResponses);
  EXPECT_EQ(w->url, "https://api.openai.com/v1/responses");
  EXPECT_THAT(w->headers, Contains("Authorization: Bearer sk-1"));
  const Json body = Json::parse(w->body.Text());
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["store"], false);
  EXPECT_EQ(body["include"], Json::array({"reasoning.encrypted_content"}));
  EXPECT_EQ(body["prompt_cache_key"], "session-1");
  EXPECT_FALSE(body.contains("messages"));
  EXPECT_EQ(body["tools"][0], (Json{{"type", "function"},
                                    {"name", "read_file"},
                                    {"description", "Reads a file."},
                                    {"strict", false},
                                    {"parameters", Tools()[0]["function"]["parameters"]}}));
}

TEST(ResponsesConvert, CallsAreAnsweredOnceAndReasoningComesFirst) {
  const Json input =
      BuildResponsesRequest("m", TurnWithCalls().messages(), Json::array(), true, {})["input"];
  ASSERT_EQ(input.size(), 8u) << input.dump(1);
  EXPECT_EQ(input[0]["role"], "system");
  EXPECT_EQ(input[0]["content"][0],
            (Json{{"type", "input_text"}, {"text", "You are a coding agent."}}));
  EXPECT_EQ(input[1]["content"][0]["type"], "input_text");
  EXPECT_EQ(input[2], kReasoning);  // verbatim, before the message's other items
  EXPECT_EQ(
      input[3],
      (Json{{"type", "message"},
            {"role", "assistant"},
            {"content", Json::array({{{"type", "output_text"}, {"text", "Reading both."}}})}}));
  EXPECT_EQ(input[4], (Json{{"type", "function_call"},
                            {"call_id", "c1"},
                            {"name", "read_file"},
                            {"arguments", "{\"path\":\"a.txt\"}"}}));
  EXPECT_EQ(input[7],
            (Json{{"type", "function_call_output"}, {"call_id", "c2"}, {"output", "beta\n"}}));
  // Every function_call has exactly one function_call_output, and no output lacks its call.
  std::multiset<std::string> calls, outputs;
  for (const Json& item : input) {
    if (item["type"] == "function_call") calls.insert(item["call_id"].get<std::string>());
    if (item["type"] == "function_call_output") outputs.insert(item["call_id"].get<std::string>());
  }
  EXPECT_EQ(calls, outputs);
  EXPECT_EQ(calls.size(), 2u);
  // Nothing of our own fields goes out.
  for (const Json& item : input) {
    EXPECT_FALSE(item.contains("reasoning_content")) << item;
    EXPECT_FALSE(item.contains("openai_reasoning")) << item;
    EXPECT_FALSE(item.contains("tool_calls")) << item;
  }
}

TEST(ResponsesConvert, TheFirstItemsOfTheNextStepAreTheSameBytes) {
  Transcript t = TurnWithCalls();
  RequestCache cache;
  const std::string step1 = Body(t, "openai-responses", &cache);
  EXPECT_EQ(step1, Body(t, "openai-responses", nullptr));
  ASSERT_TRUE(t.AppendAssistant({{"role", "assistant"},
                                 {"content", "Both read."},
                                 {"openai_reasoning", Json::array({kReasoning})}})
                  .ok());
  ASSERT_TRUE(t.AppendUser("thanks").ok());
  const std::string step2 = Body(t, "openai-responses", &cache);
  EXPECT_EQ(step2, Body(t, "openai-responses", nullptr));
  // The input array of step 1, without its closing bracket, starts step 2's.
  const size_t start1 = step1.find("\"input\":[");
  const size_t end1 = step1.find("],\"model\"");
  ASSERT_NE(start1, std::string::npos);
  ASSERT_NE(end1, std::string::npos);
  const std::string prefix = step1.substr(0, end1);
  EXPECT_EQ(step2.substr(0, prefix.size()), prefix);
  EXPECT_EQ(step2[prefix.size()], ',');
}

TEST(ResponsesConvert, OtherProvidersNeverSeeTheReasoningItems) {
  const Transcript t = TurnWithCalls();
  for (RequestCache* cache : {static_cast<RequestCache*>(nullptr), new RequestCache()}) {
    const std::string chat = Body(t, "openai", cache);
    EXPECT_THAT(chat, Not(HasSubstr("openai_reasoning")));
    EXPECT_THAT(chat, Not(HasSubstr("ENC-7")));
    const std::string anthropic = Body(t, "anthropic", cache);
    EXPECT_THAT(anthropic, Not(HasSubstr("openai_reasoning")));
    EXPECT_THAT(anthropic, Not(HasSubstr("ENC-7")));
    delete cache;
  }
  // And the Responses transport sends nothing of the other providers' own fields.
  Transcript other;
  ASSERT_TRUE(other.AppendUser("hi").ok());
  ASSERT_TRUE(
      other
          .AppendAssistant(
              {{"role", "assistant"},
               {"content", "x"},
               {"reasoning_content", "deepseek's"},
               {"anthropic_thinking",
                Json::array({{{"type", "thinking"}, {"thinking", "t"}, {"signature", "SIG"}}})}})
          .ok());
  const std::string responses = Body(other, "openai-responses", nullptr);
  EXPECT_THAT(responses, Not(HasSubstr("SIG")));
  EXPECT_THAT(responses, Not(HasSubstr("deepseek's")));
}

TEST(ResponsesConvert, SwitchingProvidersMidSessionKeepsEveryRequestValid) {
  Transcript t = TurnWithCalls();
  RequestCache cache;
  for (const char* provider :
       {"openai-responses", "openai", "openai-responses", "anthropic", "openai-responses"}) {
    EXPECT_EQ(Body(t, provider, &cache), Body(t, provider, nullptr)) << provider;
  }
}

TEST(ResponsesConvert, ReasoningGoesOnlyToTheModelThatMadeIt) {
  Transcript t = TurnWithCalls();
  Json messages = t.messages();
  messages[2]["openai_reasoning_model"] = "gpt-x";
  absl::StatusOr<Transcript> stamped = Transcript::FromJson(messages);
  ASSERT_TRUE(stamped.ok());
  RequestCache cache;
  // Body() asks for gpt-x: the items go.
  EXPECT_THAT(Body(*stamped, "openai-responses", &cache), HasSubstr("ENC-7"));
  EXPECT_THAT(Body(*stamped, "openai-responses", nullptr), HasSubstr("ENC-7"));
  // Another model gets the message's text and calls, not its reasoning.
  const Json other = ResponsesInputItems(messages[2], "gpt-other");
  ASSERT_EQ(other.size(), 3u);
  EXPECT_EQ(other[0]["type"], "message");
  EXPECT_EQ(ResponsesInputItems(messages[2], "gpt-x").size(), 4u);
  // Nor does the stamp leave with chat.
  EXPECT_THAT(Body(*stamped, "openai", nullptr), Not(HasSubstr("openai_reasoning_model")));
}

TEST(ResponsesConvert, SwitchingModelReconvertsTheCachedItems) {
  Json messages = TurnWithCalls().messages();
  messages[2]["openai_reasoning_model"] = "gpt-x";
  absl::StatusOr<Transcript> t = Transcript::FromJson(messages);
  ASSERT_TRUE(t.ok());
  RequestCache cache;
  for (const char* model : {"gpt-x", "gpt-other", "gpt-x"}) {
    ModelSettings settings{"http://127.0.0.1:1/v1", "k", model, "openai-responses", ""};
    ModelRequest plain;
    plain.settings = settings;
    plain.messages = t->messages();
    ModelRequest cached;
    cached.settings = settings;
    cached.prepared = std::make_shared<const PreparedMessages>(
        cache.Prepare(*t, Provider::kOpenAiResponses, OpenAiOptionsFor(settings)));
    absl::StatusOr<WireRequest> a = BuildWireRequest(plain);
    absl::StatusOr<WireRequest> b = BuildWireRequest(cached);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->body.Text(), b->body.Text()) << model;
    EXPECT_EQ(a->body.Text().find("ENC-7") != std::string::npos, std::string(model) == "gpt-x");
  }
}

TEST(ResponsesConvert, RefusalEmptyTextAndImages) {
  const Json refusal = ResponsesInputItems(
      {{"role", "assistant"}, {"content", ""}, {"refusal", "I cannot help with that."}});
  ASSERT_EQ(refusal.size(), 1u);
  EXPECT_EQ(refusal[0]["content"][0]["text"], "I cannot help with that.");
  EXPECT_TRUE(ResponsesInputItems({{"role", "user"}, {"content", ""}}).empty());
  const Json image = ResponsesInputItems(
      {{"role", "user"},
       {"content", Json::array({{{"type", "text"}, {"text", "see"}},
                                {{"type", "image_url"}, {"image_url", {{"url", "data:x"}}}}})}});
  ASSERT_EQ(image.size(), 1u);
  EXPECT_EQ(image[0]["content"][1]["type"], "input_image");
  EXPECT_EQ(image[0]["content"][1]["image_url"], "data:x");
}

TEST(ResponsesConvert, InverseGivesTheTranscriptBack) {
  const Json messages = TurnWithCalls().messages();
  const Json back = ChatMessagesFromResponsesInput(
      BuildResponsesRequest("m", messages, Json::array(), true, {})["input"]);
  ASSERT_EQ(back.size(), messages.size()) << back.dump(1);
  EXPECT_EQ(back[2]["openai_reasoning"], Json::array({kReasoning}));
  EXPECT_EQ(back[2]["tool_calls"], messages[2]["tool_calls"]);
  EXPECT_EQ(back[2]["content"], "Reading both.");
  EXPECT_EQ(back[4], messages[4]);
}

}  // namespace
}  // namespace agent::daemon::llm
