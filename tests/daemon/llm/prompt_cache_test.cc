// Prompt caching on the wire: Anthropic's cache breakpoints and OpenAI's prompt_cache_key, on
// the request bodies BuildWireRequest sends (cached and uncached).
#include <string>

#include "common/transcript.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/request_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::StatusIs;
using ::testing::HasSubstr;

Json J(const char* text) { return Json::parse(text); }

const char* kTools = R"([{"type":"function","function":{"name":"read_file",
  "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},
  {"type":"function","function":{"name":"now"}}])";

Json Call(const std::string& id) {
  return {{"id", id},
          {"type", "function"},
          {"function", {{"name", "read_file"}, {"arguments", "{\"path\":\"a\"}"}}}};
}

// A step of the turn loop: the model calls `calls` tools at once, each gets its result.
void Step(Transcript* t, const std::string& tag, int calls) {
  Json tool_calls = Json::array();
  for (int i = 0; i < calls; ++i) tool_calls.push_back(Call(tag + std::to_string(i)));
  Json a = {{"role", "assistant"},
            {"content", "step " + tag},
            {"anthropic_thinking",
             Json::array({{{"type", "thinking"}, {"thinking", "hm"}, {"signature", "s"}}})},
            {"tool_calls", std::move(tool_calls)}};
  ASSERT_TRUE(t->AppendAssistant(a).ok());
  for (int i = 0; i < calls; ++i) {
    ASSERT_TRUE(t->AppendToolResult(tag + std::to_string(i), "result " + tag).ok());
  }
}

std::string Body(const Transcript& t, const std::string& provider, const std::string& ttl,
                 RequestCache* cache, const std::string& cache_key = "session-1") {
  ModelRequest r;
  r.settings = ModelSettings{"http://127.0.0.1:1/v1", "k", "m", provider, ttl};
  r.tools = J(kTools);
  r.cache_key = cache_key;
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

// The blocks that carry cache_control, as "where:index" strings, in request order.
std::vector<std::string> Breakpoints(const Json& body) {
  std::vector<std::string> out;
  const Json& tools = body.value("tools", Json::array());
  for (size_t i = 0; i < tools.size(); ++i) {
    if (tools[i].contains("cache_control")) out.push_back("tools:" + std::to_string(i));
  }
  if (body.contains("system") && body["system"].is_array()) {
    for (size_t i = 0; i < body["system"].size(); ++i) {
      if (body["system"][i].contains("cache_control")) out.push_back("system:" + std::to_string(i));
    }
  }
  const Json& messages = body["messages"];
  for (size_t m = 0; m < messages.size(); ++m) {
    const Json& blocks = messages[m]["content"];
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b].contains("cache_control")) {
        out.push_back("messages:" + std::to_string(m) + "." + std::to_string(b));
      }
    }
  }
  return out;
}

Transcript Started() {
  Transcript t;
  EXPECT_TRUE(t.AppendSystem("You are a coding agent.").ok());
  EXPECT_TRUE(t.AppendUser("read the files").ok());
  return t;
}

TEST(PromptCache, AnthropicMarksToolsSystemAndTheNewestMessages) {
  Transcript t = Started();
  Step(&t, "a", 2);
  const Json body = Json::parse(Body(t, "anthropic", "", nullptr));
  // user, assistant (thinking, text, 2 tool_use), user (2 tool_result).
  EXPECT_THAT(Breakpoints(body),
              ::testing::ElementsAre("tools:1", "system:0", "messages:0.0", "messages:2.1"));
  EXPECT_EQ(body["tools"][1]["cache_control"], J(R"({"type":"ephemeral"})"));
  EXPECT_EQ(body["system"], J(R"([{"type":"text","text":"You are a coding agent.",
                                   "cache_control":{"type":"ephemeral"}}])"));
}

TEST(PromptCache, NeverMoreThanFourBreakpointsAndNeverOnThinking) {
  Transcript t = Started();
  RequestCache cache;
  for (int i = 0; i < 12; ++i) {
    Step(&t, "s" + std::to_string(i), 1 + i % 3);
    for (RequestCache* c : {static_cast<RequestCache*>(nullptr), &cache}) {
      const Json body = Json::parse(Body(t, "anthropic", "", c));
      EXPECT_LE(Breakpoints(body).size(), 4u);
      for (const Json& m : body["messages"]) {
        for (const Json& b : m["content"]) {
          if (!MarkableBlock(b)) {
            EXPECT_FALSE(b.contains("cache_control")) << b.dump();
          }
        }
      }
    }
  }
}

TEST(PromptCache, AMessageEndingInThinkingHasItsLastOtherBlockMarked) {
  Json messages = J(R"([{"role":"user","content":"hi"},
    {"role":"assistant","content":"answer","anthropic_thinking":[
      {"type":"thinking","thinking":"t","signature":"s"}]}])");
  // The thinking block comes first in the message; put an assistant with only thinking last.
  messages.push_back(J(R"({"role":"user","content":"more"})"));
  messages.push_back(J(R"({"role":"assistant","content":"","anthropic_thinking":[
      {"type":"redacted_thinking","data":"xyz"}]})"));
  const Json body = BuildAnthropicRequest("m", messages, Json::array(), 100, true,
                                          AnthropicCache{.breakpoints = true, .ttl = ""});
  // messages: user, assistant(thinking, text), user, assistant(redacted_thinking)
  EXPECT_THAT(Breakpoints(body), ::testing::ElementsAre("messages:1.1"));
}

// The newest breakpoint of one request is where the next request reads: the next step's
// request marks the same block (the previous request's last one), however many blocks the
// step added (more than Anthropic's look-back of 20 here).
TEST(PromptCache, TheNextRequestReadsTheEntryThePreviousOneWrote) {
  Transcript t = Started();
  RequestCache cache;
  Step(&t, "a", 1);
  for (int i = 0; i < 4; ++i) {
    const Json before = Json::parse(Body(t, "anthropic", "", &cache));
    const size_t last = before["messages"].size() - 1;
    Json written = before["messages"][last]["content"].back();
    written.erase("cache_control");
    Step(&t, "b" + std::to_string(i), 15);  // 1 thinking + 1 text + 15 tool_use + 15 results
    const Json after = Json::parse(Body(t, "anthropic", "", &cache));
    Json read = after["messages"][last]["content"].back();
    EXPECT_EQ(read["cache_control"], J(R"({"type":"ephemeral"})"));
    read.erase("cache_control");
    EXPECT_EQ(read, written);
    EXPECT_EQ(after["messages"].size(), last + 3);
  }
}

TEST(PromptCache, TtlOfOneHourIsSentAndFiveMinutesIsTheDefault) {
  Transcript t = Started();
  Step(&t, "a", 1);
  RequestCache cache;
  for (RequestCache* c : {static_cast<RequestCache*>(nullptr), &cache}) {
    const Json hour = Json::parse(Body(t, "anthropic", "1h", c));
    EXPECT_EQ(hour["system"][0]["cache_control"], J(R"({"type":"ephemeral","ttl":"1h"})"));
    EXPECT_EQ(hour["messages"][2]["content"].back()["cache_control"],
              J(R"({"type":"ephemeral","ttl":"1h"})"));
    EXPECT_EQ(Breakpoints(hour).size(), 4u);
    EXPECT_EQ(Body(t, "anthropic", "5m", c), Body(t, "anthropic", "", c));
  }
  ModelRequest bad;
  bad.settings = ModelSettings{"http://h/v1", "k", "m", "anthropic", "2h"};
  bad.messages = t.messages();
  absl::StatusOr<WireRequest> w = BuildWireRequest(bad);
  EXPECT_THAT(w.status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(w.status().message()), HasSubstr("AGENT_CACHE_TTL"));
}

TEST(PromptCache, PreparedBodiesEqualTheBuiltOnesWithBreakpoints) {
  Transcript t = Started();
  RequestCache cache;
  for (int i = 0; i < 6; ++i) {
    Step(&t, "s" + std::to_string(i), i % 3);
    if (i == 3) {
      ASSERT_TRUE(t.AppendUser("a new prompt").ok());
    }
    for (const char* ttl : {"", "1h"}) {
      EXPECT_EQ(Body(t, "anthropic", ttl, &cache), Body(t, "anthropic", ttl, nullptr)) << i;
    }
  }
}

TEST(PromptCache, OpenAiSendsTheSessionAsPromptCacheKey) {
  Transcript t = Started();
  RequestCache cache;
  for (RequestCache* c : {static_cast<RequestCache*>(nullptr), &cache}) {
    const Json body = Json::parse(Body(t, "openai", "", c, "0123-session"));
    EXPECT_EQ(body["prompt_cache_key"], "0123-session");
    EXPECT_FALSE(Json::parse(Body(t, "openai", "", c, "")).contains("prompt_cache_key"));
    // Anthropic has no such field.
    EXPECT_FALSE(Json::parse(Body(t, "anthropic", "", nullptr, "k")).contains("prompt_cache_key"));
  }
  EXPECT_EQ(Body(t, "openai", "", &cache, "k"), Body(t, "openai", "", nullptr, "k"));
}

}  // namespace
}  // namespace agent::daemon::llm
