#include "daemon/llm/openai_stream.h"

#include <string>
#include <vector>

#include "daemon/llm/model_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::RecordingSink;
using ::agent::daemon::llm::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

SseEvent Data(const Json& j) { return SseEvent{"", DumpJson(j), ""}; }
SseEvent Raw(std::string data) { return SseEvent{"", std::move(data), ""}; }

Json Chunk(const Json& delta, const Json& finish_reason = nullptr) {
  return {{"id", "chatcmpl-t"},
          {"object", "chat.completion.chunk"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish_reason}}}}};
}

// A vector, not a Json: `Calls({entry})` must be an array of one entry, while a Json
// parameter would be copy-initialised from the entry itself (CWG 1467).
Json Calls(const std::vector<Json>& entries, const Json& finish_reason = nullptr) {
  return Chunk({{"tool_calls", Json(entries)}}, finish_reason);
}

Json Call(const Json& index, const Json& id, const Json& name, const Json& arguments) {
  Json e = Json::object();
  if (!index.is_discarded()) e["index"] = index;
  if (!id.is_discarded()) e["id"] = id;
  Json f = Json::object();
  if (!name.is_discarded()) f["name"] = name;
  if (!arguments.is_discarded()) f["arguments"] = arguments;
  e["function"] = f;
  return e;
}

const Json kNone = Json(Json::value_t::discarded);

class OpenAiStream : public ::testing::Test {
 protected:
  void Feed(const Json& chunk) { ASSERT_TRUE(assembler_.OnEvent(Data(chunk)).ok()) << chunk; }
  ModelReply FinishOk() {
    EXPECT_TRUE(assembler_.OnEvent(Raw("[DONE]")).ok());
    absl::StatusOr<ModelReply> reply = assembler_.Finish();
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *std::move(reply) : ModelReply();
  }

  RecordingSink sink_;
  OpenAiStreamAssembler assembler_{&sink_};
};

TEST_F(OpenAiStream, TextFragmentsConcatenateAndReachSinkAsTheyArrive) {
  Feed(Chunk({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}));
  EXPECT_FALSE(assembler_.OutputStarted());
  Feed(Chunk({{"content", "Hel"}}));
  EXPECT_EQ(sink_.text(), "Hel");
  EXPECT_TRUE(assembler_.OutputStarted());
  Feed(Chunk({{"content", "lo ✓"}}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "Hello ✓");
  EXPECT_EQ(sink_.text(), "Hello ✓");
  EXPECT_EQ(sink_.text_calls(), 2);  // the empty first fragment is not passed on
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_TRUE(r.tool_calls.empty());
}

TEST_F(OpenAiStream, OllamaReusesIndexZeroForParallelCalls) {
  Feed(Calls({Call(0, "call_a", "read_file", R"({"path":"a.rs"})")}));
  Feed(Calls({Call(0, "call_b", "read_file", R"({"path":"b.rs"})")}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "call_a");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"a.rs"})");
  EXPECT_EQ(r.tool_calls[1].id, "call_b");
  EXPECT_EQ(r.tool_calls[1].arguments, R"({"path":"b.rs"})");
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_THAT(sink_.started(), ElementsAre("call_a|read_file", "call_b|read_file"));
}

TEST_F(OpenAiStream, OllamaParallelCallsInOneChunkAtIndexZero) {
  Feed(Calls({Call(0, "a1", "ls", R"({"p":1})"), Call(0, "b2", "ls", R"({"p":2})")}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[1].id, "b2");
}

TEST_F(OpenAiStream, OllamaWithoutAnyIndex) {
  // Before Ollama 0.4.7 the index was missing entirely.
  Feed(Calls({Call(kNone, "call_1", "ls", "{}"), Call(kNone, "call_2", "pwd", "{}")}));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].name, "ls");
  EXPECT_EQ(r.tool_calls[1].name, "pwd");
}

TEST_F(OpenAiStream, LmStudioNewIdEveryFragment) {
  Feed(Calls({Call(0, "111", "bash", "")}));
  const std::vector<std::string> frags = {"{\"com", "mand\": ", "\"ls\"", "}"};
  int id = 112;
  for (const std::string& f : frags) Feed(Calls({Call(0, std::to_string(id++), "", f)}));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "111");
  EXPECT_EQ(r.tool_calls[0].name, "bash");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"command": "ls"})");
  EXPECT_THAT(sink_.started(), ElementsAre("111|bash"));
}

TEST_F(OpenAiStream, VllmRepeatsIdAndNameInFinalChunk) {
  Json first = Call(0, "chatcmpl-tool-1", "edit_file", "");
  first["type"] = "function";
  Feed(Calls({first}));
  Feed(Calls({Call(0, kNone, kNone, "{\"a\": ")}));
  Json last = Call(0, "chatcmpl-tool-1", "edit_file", "1}");
  last["type"] = "function";
  Feed(Calls({last}, "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "chatcmpl-tool-1");
  EXPECT_EQ(r.tool_calls[0].name, "edit_file");
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"a\": 1}");
}

TEST_F(OpenAiStream, VllmExplicitNullContinuationFields) {
  Feed(Calls({Call(0, "c1", "grep", nullptr)}));
  Json cont = Call(0, nullptr, nullptr, "{}");
  cont["type"] = nullptr;
  Feed(Calls({cont}, "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "c1");
  EXPECT_EQ(r.tool_calls[0].name, "grep");
  EXPECT_EQ(r.tool_calls[0].arguments, "{}");
}

TEST_F(OpenAiStream, GeminiCallsWithoutIndex) {
  Json a = Call(kNone, "fc-1", "read_file", R"({"path":"x"})");
  a["extra_content"] = {{"google", {{"thought_signature", "sig"}}}};
  Feed(Calls({a, Call(kNone, "fc-2", "read_file", R"({"path":"y"})")}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].extra["extra_content"]["google"]["thought_signature"], "sig");
  EXPECT_TRUE(r.tool_calls[1].extra.empty());
  EXPECT_EQ(r.finish_reason, "tool_calls");  // Gemini says "stop" while streaming
}

TEST_F(OpenAiStream, GeminiArgumentsSplitOverIndexlessDeltas) {
  Feed(Calls({Call(kNone, "fc-1", "bash", "{\"command\":")}));
  Feed(Calls({Call(kNone, kNone, kNone, "\"ls\"}")}));
  Feed(Calls({{{"id", "fc-1"}, {"extra_content", {{"google", {{"thought_signature", "s"}}}}}}}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"command\":\"ls\"}");
  EXPECT_EQ(r.tool_calls[0].extra["extra_content"]["google"]["thought_signature"], "s");
}

TEST_F(OpenAiStream, IndexlessCallsWithoutIdsSplitOnNewName) {
  Feed(Calls({Call(kNone, kNone, "ls", "{}"), Call(kNone, kNone, "pwd", "{}")}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_NE(r.tool_calls[0].id, r.tool_calls[1].id);
}

TEST_F(OpenAiStream, FirstIndexIsOne) {
  Feed(Chunk({{"role", "assistant"}, {"content", "text took 0"}}));
  Feed(Calls({Call(1, "toolu_1", "grep", "{\"p\":1}")}));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);  // no empty call for index 0
  EXPECT_EQ(r.tool_calls[0].id, "toolu_1");
}

TEST_F(OpenAiStream, NameRestatedOnEveryFragment) {
  Feed(Calls({Call(0, "t1", "grep", "{\"a\":")}));
  Feed(Calls({Call(0, "t1", "grep", "1}")}));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "grep");
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"a\":1}");
}

TEST_F(OpenAiStream, NameSplitOverFragmentsIsJoinedAndReportedWhole) {
  Feed(Calls({Call(0, "c", "edit_ex", kNone)}));
  EXPECT_THAT(sink_.started(), IsEmpty());
  Feed(Calls({Call(0, kNone, "isting_file", kNone)}));
  Feed(Calls({Call(0, kNone, kNone, "{}")}));
  EXPECT_THAT(sink_.started(), ElementsAre("c|edit_existing_file"));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "edit_existing_file");
}

TEST_F(OpenAiStream, TypeRepeatedOrLateIsIgnored) {
  Json a = Call(0, "c", "ls", "{\"x\"");
  a["type"] = "function";
  Json b = Call(0, kNone, kNone, ":1}");
  b["type"] = "function";  // DeepInfra sends the type after the arguments
  Json c = Call(0, kNone, kNone, kNone);
  c["type"] = "";  // DeepSeek hosts
  Feed(Calls({a}));
  Feed(Calls({b}));
  Feed(Calls({c}, "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"x\":1}");
  EXPECT_FALSE(r.tool_calls[0].extra.contains("type"));
}

TEST_F(OpenAiStream, ArgumentsObjectBecomesCompactJson) {
  Feed(Calls({Call(0, "c", "ls", Json{{"path", "src"}, {"n", 2}})}));
  Feed(Chunk(Json::object(), "stop"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"n":2,"path":"src"})");
}

TEST_F(OpenAiStream, EmptyArgumentsBecomeEmptyObject) {
  Feed(Calls({Call(0, "c", "git_status", "")}));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{}");
  EXPECT_THAT(sink_.started(), ElementsAre("c|git_status"));  // told at the finish
}

TEST_F(OpenAiStream, EntriesSharingAnIndexInOneChunk) {
  // openai-python#3201: vLLM serving Kimi with speculative decoding.
  Feed(Calls({Call(0, "k", "grep", kNone), Call(0, kNone, kNone, " {\"")}));
  Feed(Calls({Call(0, kNone, kNone, "q\":1}")}));
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, " {\"q\":1}");
}

TEST_F(OpenAiStream, OrderByIndexThenAppearance) {
  Feed(Calls({Call(2, "c2", "two", "{}")}));
  Feed(Calls({Call(0, "c0", "zero", "{\"a\":")}));
  Feed(Calls({Call(1, "c1", "one", "{}")}));
  Feed(Calls({Call(0, kNone, kNone, "1}")}));         // interleaved continuation of index 0
  Feed(Calls({Call(0, "c0b", "zero_again", "{}")}));  // Ollama-style second call at 0
  Feed(Chunk(Json::object(), "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 4u);
  EXPECT_EQ(r.tool_calls[0].id, "c0");
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"a\":1}");
  EXPECT_EQ(r.tool_calls[1].id, "c0b");
  EXPECT_EQ(r.tool_calls[2].id, "c1");
  EXPECT_EQ(r.tool_calls[3].id, "c2");
}

TEST_F(OpenAiStream, ExtraPerCallFieldsKept) {
  Json e = Call(0, "c", "ls", "{}");
  e["extra_content"] = {{"google", {{"thought_signature", "abc"}}}};
  e["vendor_flag"] = true;
  Feed(Calls({e}, "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].extra["extra_content"]["google"]["thought_signature"], "abc");
  EXPECT_EQ(r.tool_calls[0].extra["vendor_flag"], true);
}

TEST_F(OpenAiStream, FinishReasonStopWithCallsBecomesToolCalls) {
  Feed(Calls({Call(0, "c", "ls", "{}")}));
  Feed(Chunk(Json::object(), "stop"));
  EXPECT_EQ(FinishOk().finish_reason, "tool_calls");
}

TEST_F(OpenAiStream, EmptyFinishReasonIsAbsent) {
  // SGLang sends "" on every intermediate chunk.
  Feed(Chunk({{"role", nullptr}, {"content", "a"}}, ""));
  EXPECT_FALSE(assembler_.Complete());
  Feed(Chunk({{"content", "b"}}, "stop"));
  EXPECT_TRUE(assembler_.Complete());
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "ab");
  EXPECT_EQ(r.finish_reason, "stop");
}

TEST_F(OpenAiStream, UnknownFinishReasonKept) {
  Feed(Chunk({{"content", "a"}}, "insufficient_system_resource"));
  EXPECT_EQ(FinishOk().finish_reason, "insufficient_system_resource");
}

TEST_F(OpenAiStream, UsageChunkWithEmptyChoices) {
  Feed(Chunk({{"content", "hi"}}, "stop"));
  Feed({{"id", "chatcmpl-t"},
        {"choices", Json::array()},
        {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 3}, {"total_tokens", 14}}}});
  ModelReply r = FinishOk();
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 11);
  EXPECT_EQ(r.usage->completion_tokens, 3);
}

TEST_F(OpenAiStream, CachedPromptTokensFromTheDetails) {
  Feed(Chunk({{"content", "hi"}}, "stop"));
  Feed({{"id", "chatcmpl-t"},
        {"choices", Json::array()},
        {"usage",
         {{"prompt_tokens", 2006},
          {"completion_tokens", 300},
          {"prompt_tokens_details", {{"cached_tokens", 1920}, {"audio_tokens", 0}}}}}});
  ModelReply r = FinishOk();
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 2006);
  EXPECT_EQ(r.usage->cached_tokens, 1920);
}

TEST_F(OpenAiStream, UsageOnTheFinishChunk) {
  // llama.cpp before #15444, Claude via proxies.
  Json last = Chunk(Json::object(), "stop");
  last["usage"] = {{"prompt_tokens", 5}, {"completion_tokens", 9}};
  last["timings"] = {{"predicted_n", 9}};
  Feed(Chunk({{"content", "x"}, {"usage", nullptr}}));
  Feed(last);
  ModelReply r = FinishOk();
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->completion_tokens, 9);
}

TEST_F(OpenAiStream, NoUsageWhenServerSendsNone) {
  Feed(Chunk({{"content", "x"}}, "stop"));
  EXPECT_FALSE(FinishOk().usage.has_value());
}

TEST_F(OpenAiStream, GroqUsageUnderXGroqThenStandardUsageWins) {
  Json finish = Chunk(Json::object(), "stop");
  finish["x_groq"] = {{"id", "req"}, {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 2}}}};
  Feed(Chunk({{"role", "assistant"}, {"content", "a"}, {"tool_calls", Json::array()}}));
  Feed(finish);
  Feed({{"choices", Json::array()}, {"usage", {{"prompt_tokens", 7}, {"completion_tokens", 8}}}});
  ModelReply r = FinishOk();
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 7);
  EXPECT_TRUE(r.tool_calls.empty());
}

TEST_F(OpenAiStream, AzureEmptyChoices) {
  Feed({{"id", ""},
        {"choices", Json::array()},
        {"prompt_filter_results",
         {{{"prompt_index", 0}, {"content_filter_results", Json::object()}}}}});
  // A late choice with no delta, only filter results.
  Feed(
      {{"id", "x"},
       {"choices",
        {{{"index", 0}, {"finish_reason", nullptr}, {"content_filter_results", Json::object()}}}}});
  Feed(Chunk({{"content", "ok"}}, "content_filter"));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "ok");
  EXPECT_EQ(r.finish_reason, "content_filter");
}

TEST_F(OpenAiStream, ReasoningContentAndReasoningBothAccepted) {
  Feed(Chunk({{"reasoning_content", "deep"}}));
  Feed(Chunk({{"reasoning", "seek "}}));
  Feed(Chunk({{"reasoning_content", "and"}, {"reasoning", "and"}}));  // same text twice
  Feed(Chunk({{"content", "answer"}}, "stop"));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.reasoning, "deepseek and");
  EXPECT_EQ(sink_.reasoning(), "deepseek and");
  EXPECT_EQ(r.content, "answer");
}

TEST_F(OpenAiStream, RefusalCollectedAndContentStaysEmpty) {
  Feed(Chunk({{"content", nullptr}, {"refusal", "I can't "}}));
  Feed(Chunk({{"refusal", "do that."}}, "stop"));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.refusal, "I can't do that.");
  EXPECT_EQ(r.content, "");
}

TEST_F(OpenAiStream, ThinkTagsPassThroughAsContent) {
  Feed(Chunk({{"content", "<think>hmm</think>"}}));
  Feed(Chunk({{"content", "Yes."}}, "stop"));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.content, "<think>hmm</think>Yes.");
  EXPECT_EQ(r.reasoning, "");
}

TEST_F(OpenAiStream, UnknownFieldsIgnored) {
  Json c = Chunk({{"content", "a"}, {"obfuscation", "xYz"}});
  c["system_fingerprint"] = "fp";
  c["service_tier"] = "default";
  c["timings"] = {{"a", 1}};
  Feed(c);
  Feed(Chunk(Json::object(), "stop"));
  EXPECT_EQ(FinishOk().content, "a");
}

TEST_F(OpenAiStream, OtherChoicesIgnored) {
  Json c = Chunk({{"content", "zero"}});
  c["choices"].push_back(
      {{"index", 1}, {"delta", {{"content", "one"}}}, {"finish_reason", nullptr}});
  Feed(c);
  Feed(Chunk(Json::object(), "stop"));
  EXPECT_EQ(FinishOk().content, "zero");
}

TEST_F(OpenAiStream, ErrorObjectInsideStream) {
  Feed(Chunk({{"content", "par"}}));
  absl::Status s = assembler_.OnEvent(
      Data({{"error", {{"message", "The server had an error"}, {"type", "server_error"}}}}));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(s.message(), "The server had an error");
  EXPECT_TRUE(assembler_.OutputStarted());
  // Later events and Finish repeat the error; nothing is turned into a short success.
  EXPECT_THAT(assembler_.OnEvent(Raw("[DONE]")), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(assembler_.Finish().status(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(OpenAiStream, InvalidRequestErrorInsideStreamIsInvalidArgument) {
  absl::Status s = assembler_.OnEvent(
      Data({{"error",
             {{"message", "bad param"}, {"type", "invalid_request_error"}, {"code", nullptr}}}}));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(s.message(), "bad param");
}

TEST_F(OpenAiStream, RateLimitErrorInsideStreamIsUnavailableButQuotaIsNot) {
  EXPECT_THAT(assembler_.OnEvent(Data({{"error", {{"message", "slow"}, {"code", 429}}}})),
              StatusIs(absl::StatusCode::kUnavailable));
  OpenAiStreamAssembler other(nullptr);
  EXPECT_THAT(other.OnEvent(Data({{"error",
                                   {{"message", "quota"},
                                    {"type", "insufficient_quota"},
                                    {"code", "insufficient_quota"}}}})),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(OpenAiStream, VllmErrorObjectWithoutWrapper) {
  absl::Status s = assembler_.OnEvent(Data({{"object", "error"},
                                            {"message", "context too long"},
                                            {"type", "BadRequestError"},
                                            {"param", nullptr},
                                            {"code", 400}}));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(s.message(), "context too long");
  OpenAiStreamAssembler other(nullptr);
  EXPECT_THAT(other.OnEvent(Data({{"object", "error"}, {"message", "x"}, {"code", 503}})),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(OpenAiStream, EventErrorLine) {
  absl::Status s = assembler_.OnEvent(SseEvent{"error", "upstream went away", ""});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(s.message(), "upstream went away");
  OpenAiStreamAssembler other(nullptr);
  absl::Status t = other.OnEvent(SseEvent{"error", "{\"error\":{}}", ""});
  EXPECT_EQ(t.message(), "An error occurred during streaming");
}

TEST_F(OpenAiStream, NullErrorFieldIsNotAnError) {
  Json c = Chunk({{"content", "fine"}}, "stop");
  c["error"] = nullptr;
  Feed(c);
  EXPECT_EQ(FinishOk().content, "fine");
}

TEST_F(OpenAiStream, ErrorMessageTruncatedTo200Chars) {
  std::string longmsg;
  for (int i = 0; i < 300; ++i) longmsg += "é";
  absl::Status s = assembler_.OnEvent(Data({{"error", {{"message", longmsg}}}}));
  std::string expected;
  for (int i = 0; i < 200; ++i) expected += "é";
  EXPECT_EQ(s.message(), expected);
}

TEST_F(OpenAiStream, MalformedChunkIsInternal) {
  absl::Status s = assembler_.OnEvent(Raw("{\"choices\": [ {\"delta\""));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(s.message(), "malformed chunk");
  OpenAiStreamAssembler other(nullptr);
  EXPECT_THAT(other.OnEvent(Raw("42")), StatusIs(absl::StatusCode::kInternal));
}

TEST_F(OpenAiStream, StreamCutWithoutDoneIsIncomplete) {
  Feed(Chunk({{"content", "half an answ"}}));
  EXPECT_FALSE(assembler_.Complete());
  absl::StatusOr<ModelReply> r = assembler_.Finish();
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(r.status().message(), "stream ended before the reply was complete");
  EXPECT_TRUE(assembler_.OutputStarted());
}

TEST_F(OpenAiStream, FinishReasonWithoutDoneIsComplete) {
  Feed(Chunk({{"content", "a"}}, "stop"));
  EXPECT_TRUE(assembler_.Complete());
  absl::StatusOr<ModelReply> r = assembler_.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "a");
}

TEST_F(OpenAiStream, DoneWithoutFinishReasonIsComplete) {
  Feed(Calls({Call(0, "c", "ls", "{}")}));
  ModelReply r = FinishOk();
  EXPECT_EQ(r.finish_reason, "tool_calls");
  OpenAiStreamAssembler other(nullptr);
  ASSERT_TRUE(other.OnEvent(Data(Chunk({{"content", "x"}}))).ok());
  ASSERT_TRUE(other.OnEvent(Raw("[DONE]")).ok());
  EXPECT_EQ(other.Finish()->finish_reason, "stop");
}

TEST_F(OpenAiStream, FinishReasonLengthMarksLastCallTruncated) {
  Feed(Calls({Call(0, "c", "write_file", "{\"content\":\"lo")}));
  Feed(Calls({Call(0, kNone, kNone, "ng")}, "length"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"content\":\"long");  // kept as is, not repaired
  EXPECT_TRUE(r.LastCallTruncated());
}

TEST_F(OpenAiStream, ToolCallStartedOncePerCall) {
  Feed(Calls({Call(0, "a", "ls", "{")}));
  Feed(Calls({Call(0, "a", "ls", "}")}));
  Feed(Calls({Call(1, "b", "pwd", kNone)}));
  EXPECT_THAT(sink_.started(), ElementsAre("a|ls"));
  Feed(Chunk(Json::object(), "tool_calls"));
  EXPECT_THAT(sink_.started(), ElementsAre("a|ls", "b|pwd"));
  FinishOk();
  EXPECT_THAT(sink_.started(), ElementsAre("a|ls", "b|pwd"));
  EXPECT_TRUE(assembler_.OutputStarted());
}

TEST_F(OpenAiStream, MissingIdGetsStableGeneratedId) {
  auto run = [](const Json& chunk) {
    OpenAiStreamAssembler a(nullptr);
    EXPECT_TRUE(a.OnEvent(Data(chunk)).ok());
    EXPECT_TRUE(a.OnEvent(Raw("[DONE]")).ok());
    return *a.Finish();
  };
  const Json chunk = Calls({Call(0, kNone, "ls", "{}"), Call(1, kNone, "pwd", "{}")}, "tool_calls");
  ModelReply r = run(chunk);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_THAT(r.tool_calls[0].id, ::testing::MatchesRegex("[A-Za-z0-9]{9}"));
  EXPECT_NE(r.tool_calls[0].id, r.tool_calls[1].id);
  EXPECT_EQ(run(chunk).tool_calls[0].id, r.tool_calls[0].id);
}

TEST_F(OpenAiStream, DuplicateIdsWithinOneReplyMadeUnique) {
  Feed(Calls({Call(0, "same", "ls", "{}"), Call(1, "same", "pwd", "{}")}, "tool_calls"));
  ModelReply r = FinishOk();
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "same");
  EXPECT_NE(r.tool_calls[1].id, "same");
}

TEST_F(OpenAiStream, SlotWithNeitherNameNorArgumentsDropped) {
  Feed(Calls({{{"index", 0}, {"type", "function"}}}));
  Feed(Chunk({{"content", "no calls really"}}, "stop"));
  ModelReply r = FinishOk();
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.finish_reason, "stop");
}

TEST_F(OpenAiStream, EventsAfterDoneIgnored) {
  Feed(Chunk({{"content", "a"}}, "stop"));
  ASSERT_TRUE(assembler_.OnEvent(Raw("[DONE]")).ok());
  EXPECT_TRUE(assembler_.OnEvent(Data(Chunk({{"content", "late"}}))).ok());
  absl::StatusOr<ModelReply> r = assembler_.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "a");
}

TEST_F(OpenAiStream, WhitespaceOnlyDataIgnored) {
  EXPECT_TRUE(assembler_.OnEvent(Raw("\n")).ok());
  EXPECT_FALSE(assembler_.Complete());
}

TEST_F(OpenAiStream, NullSinkWorks) {
  OpenAiStreamAssembler a(nullptr);
  ASSERT_TRUE(a.OnEvent(Data(Chunk({{"content", "x"}, {"reasoning", "r"}}))).ok());
  ASSERT_TRUE(a.OnEvent(Data(Calls({Call(0, "c", "ls", "{}")}, "tool_calls"))).ok());
  EXPECT_TRUE(a.OutputStarted());
  absl::StatusOr<ModelReply> r = a.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tool_calls.size(), 1u);
}

// Caps (stream_assembler.h): the reply may not grow without bound.
TEST(OpenAiStreamCap, ContentOverTheCapEndsTheStream) {
  RecordingSink sink;
  OpenAiStreamAssembler a(&sink, /*max_reply_bytes=*/10);
  EXPECT_TRUE(a.OnEvent(Data(Chunk({{"content", "12345"}}))).ok());
  absl::Status s = a.OnEvent(Data(Chunk({{"content", "678901"}})));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(std::string(s.message()), HasSubstr("kMaxReplyBytes"));
  EXPECT_EQ(sink.text(), "12345");  // the chunk over the cap never reached the sink
  EXPECT_THAT(a.OnEvent(Raw("[DONE]")), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(a.Finish().status(), StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(OpenAiStreamCap, ReasoningAndArgumentsCountToo) {
  OpenAiStreamAssembler a(nullptr, kReplySlotBytes + 20);
  EXPECT_TRUE(a.OnEvent(Data(Chunk({{"reasoning_content", "0123456789"}}))).ok());
  EXPECT_TRUE(a.OnEvent(Data(Calls({Call(0, "c", "f", "")}))).ok());  // slot + 2 bytes
  EXPECT_TRUE(a.OnEvent(Data(Calls({Call(0, kNone, kNone, "{\"a\":1}")}))).ok());
  EXPECT_THAT(a.OnEvent(Data(Calls({Call(0, kNone, kNone, "{\"b\":2}")}))),
              StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(OpenAiStreamCap, ManyEmptyCallSlotsHitTheCap) {
  OpenAiStreamAssembler a(nullptr, 100 * kReplySlotBytes);
  absl::Status s;
  for (int i = 0; i < 1000 && s.ok(); ++i) s = a.OnEvent(Data(Calls({Call(i, kNone, kNone, "")})));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted));
}

// Pushing the real 32 MiB through the JSON parser takes seconds in a debug build; the cap's
// arithmetic is the same for any size, so only the default value is checked here.
TEST(OpenAiStreamCap, DefaultIs32MiB) {
  EXPECT_EQ(kMaxReplyBytes, size_t{32} << 20);
  EXPECT_EQ(TransportOptions().max_reply_bytes, kMaxReplyBytes);
  EXPECT_EQ(TransportOptions().max_event_bytes, kMaxSseEventBytes);
}

// Text leaves the transport as valid UTF-8. Raw invalid bytes inside a JSON string are
// replaced by the SSE layer before the JSON parser sees them (nlohmann rejects them).
TEST(OpenAiStreamUtf8, RawInvalidBytesInContentArriveAsReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  const std::string bytes =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xFF\xC3\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\","
      "\"function\":{\"name\":\"f\xFE\",\"arguments\":\"{\\\"p\\\":\\\"\xE2\x82\\\"}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
      "data: [DONE]\n\n";
  testing::StreamRun run = testing::RunStream<OpenAiStreamAssembler>(bytes, {3, 40, 41, 42});
  ASSERT_FALSE(run.reply.contains("error")) << run.reply;
  EXPECT_EQ(run.reply["content"], "a" + r + r);
  EXPECT_EQ(run.sink_text, "a" + r + r);
  EXPECT_EQ(run.reply["tool_calls"][0]["name"], "f" + r);
  EXPECT_EQ(run.reply["tool_calls"][0]["arguments"], "{\"p\":\"" + r + "\"}");
}

TEST(OpenAiStreamUtf8, CharacterSplitAcrossReadsIsKept) {
  const std::string bytes =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xF0\x9F\x98\x80\"}}]}\n\n"
      "data: [DONE]\n\n";
  const size_t emoji = bytes.find('\xF0');
  for (size_t cut = emoji + 1; cut < emoji + 4; ++cut) {
    testing::StreamRun run = testing::RunStream<OpenAiStreamAssembler>(bytes, {cut});
    EXPECT_EQ(run.reply["content"], "\xF0\x9F\x98\x80") << cut;
  }
}

// An escaped lone surrogate is valid JSON syntax but not text; nlohmann refuses it, and the
// stream ends with a clear error rather than with invalid UTF-8.
TEST(OpenAiStreamUtf8, EscapedLoneSurrogateIsAMalformedChunk) {
  OpenAiStreamAssembler a(nullptr);
  EXPECT_THAT(a.OnEvent(Raw(R"({"choices":[{"index":0,"delta":{"content":"\ud800"}}]})")),
              StatusIs(absl::StatusCode::kInternal));
}

}  // namespace
}  // namespace agent::daemon::llm
