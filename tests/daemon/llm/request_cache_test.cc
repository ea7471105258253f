#include "daemon/llm/request_cache.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

#include "common/transcript.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

Json Tools() {
  return Json::array(
      {{{"type", "function"},
        {"function",
         {{"name", "read_file"},
          {"description", "Reads a file."},
          {"parameters",
           {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}}}});
}

Json Call(const std::string& id, const std::string& args) {
  return {
      {"id", id}, {"type", "function"}, {"function", {{"name", "read_file"}, {"arguments", args}}}};
}

// Every field the outgoing filters and the Anthropic conversion treat specially: reasoning,
// refusals, thinking blocks, parallel calls, unparsable arguments, image parts, empty text,
// Unicode and a second system message.
Transcript Sample() {
  Transcript t;
  EXPECT_TRUE(t.AppendSystem("You are a coding agent. ½ → ok").ok());
  EXPECT_TRUE(t.AppendUser("read a.txt and b.txt").ok());
  Json a1 = {
      {"role", "assistant"},
      {"content", "Reading both."},
      {"reasoning_content", "the user wants two files"},
      {"anthropic_thinking",
       Json::array({{{"type", "thinking"}, {"thinking", "hm"}, {"signature", "sig"}}})},
      {"openai_reasoning",
       Json::array({{{"type", "reasoning"}, {"id", "rs_1"}, {"encrypted_content", "enc"}}})},
      {"tool_calls", Json::array({Call("c1", "{\"path\":\"a.txt\"}"), Call("c2", "{\"pa")})}};
  EXPECT_TRUE(t.AppendAssistant(a1).ok());
  EXPECT_TRUE(t.AppendToolResult("c1", "alpha\n").ok());
  EXPECT_TRUE(t.AppendToolResult("c2", "").ok());
  Json a2 = {{"role", "assistant"}, {"content", ""}, {"refusal", "I cannot help with that."}};
  EXPECT_TRUE(t.AppendAssistant(a2).ok());
  EXPECT_TRUE(t.AppendUser("a picture and \"quotes\"").ok());
  Json a3 = {{"role", "assistant"}, {"content", "Done: \"a\" → b"}};
  EXPECT_TRUE(t.AppendAssistant(a3).ok());
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(t.AppendUser("again " + std::to_string(i)).ok());
    Json a = {{"role", "assistant"},
              {"content", nullptr},
              {"tool_calls", Json::array({Call("r" + std::to_string(i), "{\"path\":\"x\"}")})}};
    EXPECT_TRUE(t.AppendAssistant(a).ok());
    EXPECT_TRUE(t.AppendToolResult("r" + std::to_string(i), "x" + std::to_string(i)).ok());
    EXPECT_TRUE(t.AppendAssistant({{"role", "assistant"}, {"content", "ok"}}).ok());
  }
  return t;
}

ModelRequest Uncached(const Transcript& t, const std::string& base_url,
                      const std::string& provider) {
  ModelRequest r;
  r.settings = ModelSettings{base_url, "k", "model-x", provider, ""};
  r.messages = t.messages();
  r.tools = Tools();
  return r;
}

std::string Body(const ModelRequest& r) {
  absl::StatusOr<WireRequest> w = BuildWireRequest(r);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? w->body.Text() : "";
}

// The body from the cache, and checks it is the uncached one byte for byte.
void ExpectSameBody(RequestCache& cache, const Transcript& t, const std::string& base_url,
                    const std::string& provider) {
  ModelRequest plain = Uncached(t, base_url, provider);
  ModelRequest cached = plain;
  cached.messages = Json::array();
  cached.prepared = std::make_shared<const PreparedMessages>(
      cache.Prepare(t, *ParseProvider(provider), OpenAiOptionsFor(plain.settings)));
  EXPECT_EQ(Body(cached), Body(plain)) << provider << " " << base_url;
}

struct Endpoint {
  const char* base_url;
  const char* provider;
};
constexpr Endpoint kEndpoints[] = {{"http://127.0.0.1:1/v1", "openai"},
                                   {"https://api.deepseek.com/v1", "openai"},
                                   {"https://api.anthropic.com/v1", "anthropic"},
                                   {"http://127.0.0.1:1/v1", "openai-responses"}};

TEST(RequestCache, BodyEqualsTheUncachedOneForEachProvider) {
  Transcript t = Sample();
  for (const Endpoint& e : kEndpoints) {
    RequestCache cache;
    ExpectSameBody(cache, t, e.base_url, e.provider);
    ExpectSameBody(cache, t, e.base_url, e.provider);  // every entry reused
  }
}

TEST(RequestCache, AppendsConvertOnlyTheNewMessages) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t;
    ASSERT_TRUE(t.AppendSystem("sys").ok());
    RequestCache cache;
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(t.AppendUser("u" + std::to_string(i)).ok());
      ExpectSameBody(cache, t, e.base_url, e.provider);
      Json a = {{"role", "assistant"},
                {"content", "a"},
                {"tool_calls", Json::array({Call("k" + std::to_string(i), "{}")})}};
      ASSERT_TRUE(t.AppendAssistant(a).ok());
      ASSERT_TRUE(t.AppendToolResult("k" + std::to_string(i), "r").ok());
      ExpectSameBody(cache, t, e.base_url, e.provider);
      EXPECT_EQ(cache.entries(), t.size());
    }
  }
}

TEST(RequestCache, AfterCompactionTheBodyFollowsTheNewTranscript) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t = Sample();
    RequestCache cache;
    ExpectSameBody(cache, t, e.base_url, e.provider);
    ASSERT_TRUE(t.ReplacePrefix(t.CutPoint(), "summary of what happened").ok());
    ExpectSameBody(cache, t, e.base_url, e.provider);
    // The system prompt rebuilt with fresh instruction files, as after a compaction: the
    // same length, so only the hash tells the entries apart.
    Json messages = t.messages();
    std::string sys = messages[0]["content"];
    sys.back() = sys.back() == 'x' ? 'y' : 'x';
    messages[0]["content"] = sys;
    absl::StatusOr<Transcript> rebuilt = Transcript::FromJson(messages);
    ASSERT_TRUE(rebuilt.ok());
    ExpectSameBody(cache, *rebuilt, e.base_url, e.provider);
  }
}

TEST(RequestCache, AfterAForkTheBodyFollowsTheTruncatedTranscript) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t = Sample();
    RequestCache cache;
    ExpectSameBody(cache, t, e.base_url, e.provider);
    Transcript fork = t;
    fork.TruncateTo(4);  // inside the parallel calls: the fork seals the open one
    ExpectSameBody(cache, fork, e.base_url, e.provider);
    ExpectSameBody(cache, t, e.base_url, e.provider);
  }
}

// A step normally finds the transcript only appended to and skips the walk over its messages'
// hashes; a change inside it (here the system prompt, the last message untouched) is still seen.
TEST(RequestCache, AChangeBeforeTheLastMessageIsSeenWithoutAnAppend) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t = Sample();
    RequestCache cache;
    ExpectSameBody(cache, t, e.base_url, e.provider);
    ASSERT_TRUE(t.ReplaceSystemText("another system prompt").ok());
    ExpectSameBody(cache, t, e.base_url, e.provider);
    ASSERT_TRUE(t.AppendUser("more").ok());
    ExpectSameBody(cache, t, e.base_url, e.provider);
  }
}

// Another transcript assigned over the one last prepared (its rewrites() count with it, the same
// last message) is compared message by message, not taken for appends.
TEST(RequestCache, ATranscriptAssignedOverTheLastOneIsNotTakenForAppends) {
  auto make = [](const std::string& question) {
    Transcript t;
    EXPECT_TRUE(t.AppendSystem("sys").ok());
    EXPECT_TRUE(t.AppendUser(question).ok());
    EXPECT_TRUE(t.AppendAssistant({{"role", "assistant"}, {"content", "ok"}}).ok());
    return t;
  };
  for (const Endpoint& e : kEndpoints) {
    RequestCache cache;
    Transcript t = make("first question");
    ExpectSameBody(cache, t, e.base_url, e.provider);
    t = make("second question");
    ExpectSameBody(cache, t, e.base_url, e.provider);
    Transcript moved = make("third question");
    t = std::move(moved);
    ExpectSameBody(cache, t, e.base_url, e.provider);
  }
}

TEST(RequestCache, SwitchingProviderDropsTheEntries) {
  Transcript t = Sample();
  RequestCache cache;
  ExpectSameBody(cache, t, "http://127.0.0.1:1/v1", "openai");
  ExpectSameBody(cache, t, "https://api.anthropic.com/v1", "anthropic");
  ExpectSameBody(cache, t, "https://api.deepseek.com/v1", "openai");
  ExpectSameBody(cache, t, "http://127.0.0.1:1/v1", "openai-responses");
  ExpectSameBody(cache, t, "http://127.0.0.1:1/v1", "openai");
}

// A body views the cache's text: what the cache does next (appends, a fork, a new system
// prompt) must never change a body already handed to the transport.
TEST(RequestCache, ABodyAlreadyBuiltNeverChanges) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t = Sample();
    RequestCache cache;
    const OpenAiRequestOptions options =
        OpenAiOptionsFor(ModelSettings{e.base_url, "k", "model-x", e.provider, ""});
    const PreparedMessages first = cache.Prepare(t, *ParseProvider(e.provider), options);
    const std::string before = first.messages.Text();
    Transcript fork = t;
    fork.TruncateTo(4);
    (void)cache.Prepare(fork, *ParseProvider(e.provider), options);
    ASSERT_TRUE(fork.AppendUser("after the fork, longer than what was cut off").ok());
    (void)cache.Prepare(fork, *ParseProvider(e.provider), options);
    ASSERT_TRUE(t.ReplaceSystemText("another system prompt").ok());
    ASSERT_TRUE(t.AppendUser("more").ok());
    (void)cache.Prepare(t, *ParseProvider(e.provider), options);
    EXPECT_EQ(first.messages.Text(), before) << e.provider;
    ExpectSameBody(cache, t, e.base_url, e.provider);
  }
}

// A long session's step is a few views of kept text, not a copy of it.
TEST(RequestCache, ALongSessionsMessagesAreAFewPieces) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t;
    ASSERT_TRUE(t.AppendSystem("sys").ok());
    RequestCache cache;
    const OpenAiRequestOptions options =
        OpenAiOptionsFor(ModelSettings{e.base_url, "k", "model-x", e.provider, ""});
    size_t most = 0;
    for (int i = 0; i < 400; ++i) {
      ASSERT_TRUE(t.AppendUser("step " + std::to_string(i) + std::string(1000, '.')).ok());
      ASSERT_TRUE(t.AppendAssistant({{"role", "assistant"}, {"content", "ok"}}).ok());
      most =
          std::max(most, cache.Prepare(t, *ParseProvider(e.provider), options).messages.pieces());
    }
    EXPECT_LE(most, 12u) << e.provider;  // one per arena, and the closing
    ExpectSameBody(cache, t, e.base_url, e.provider);
  }
}

// The transport reads a body on its own thread while the session prepares the next step (and
// forks, or rebuilds the system prompt): the bytes a body views are never written again.
TEST(RequestCache, ABodyIsReadWhileTheNextStepsArePrepared) {
  for (const Endpoint& e : kEndpoints) {
    Transcript t = Sample();
    RequestCache cache;
    const OpenAiRequestOptions options =
        OpenAiOptionsFor(ModelSettings{e.base_url, "k", "model-x", e.provider, ""});
    const PreparedMessages first = cache.Prepare(t, *ParseProvider(e.provider), options);
    const std::string expected = first.messages.Text();
    std::atomic<int> mismatches{0};
    std::thread reader([&] {
      for (int round = 0; round < 50; ++round) {
        RequestBody::Reader r(first.messages);
        std::string got(first.messages.size(), '\0');
        size_t at = 0;
        while (at < got.size()) {
          const size_t n = r.Read(got.data() + at, std::min<size_t>(7, got.size() - at));
          if (n == 0) break;
          at += n;
        }
        if (got != expected) ++mismatches;
      }
    });
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(t.AppendUser("more " + std::to_string(i)).ok());
      ASSERT_TRUE(t.AppendAssistant({{"role", "assistant"}, {"content", "ok"}}).ok());
      (void)cache.Prepare(t, *ParseProvider(e.provider), options);
      if (i == 25) {
        t.TruncateTo(6);
        ASSERT_TRUE(t.ReplaceSystemText("a new system prompt").ok());
      }
    }
    reader.join();
    EXPECT_EQ(mismatches.load(), 0) << e.provider;
  }
}

TEST(RequestCache, RequestMessagesReadsThePreparedText) {
  Transcript t = Sample();
  RequestCache cache;
  ModelRequest r;
  r.prepared = std::make_shared<const PreparedMessages>(
      cache.Prepare(t, Provider::kOpenAi, OpenAiRequestOptions()));
  Json expected = Json::array();
  for (const Json& m : t.messages()) expected.push_back(OutgoingOpenAiMessage(m, {}));
  EXPECT_EQ(RequestMessages(r), expected);
}

}  // namespace
}  // namespace agent::daemon::llm
