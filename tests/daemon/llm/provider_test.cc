#include "daemon/llm/provider.h"

#include <string>

#include "daemon/llm/anthropic_stream.h"
#include "daemon/llm/openai_stream.h"
#include "daemon/llm/responses_stream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

ModelRequest Request(std::string base_url, std::string provider, std::string key = "k") {
  ModelRequest r;
  r.settings = ModelSettings{std::move(base_url), std::move(key), "m", std::move(provider), ""};
  r.messages = Json::array({{{"role", "user"}, {"content", "hi"}}});
  return r;
}

TEST(Provider, ParsedFromTheSettingNotTheUrl) {
  EXPECT_EQ(*ParseProvider(""), Provider::kOpenAi);
  EXPECT_EQ(*ParseProvider("openai"), Provider::kOpenAi);
  EXPECT_EQ(*ParseProvider("Anthropic"), Provider::kAnthropic);
  EXPECT_EQ(*ParseProvider(" OpenAI-Responses "), Provider::kOpenAiResponses);
  EXPECT_THAT(ParseProvider("antropic").status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  // The error names every accepted value.
  const std::string message(ParseProvider("responses").status().message());
  EXPECT_THAT(message, HasSubstr("to openai "));
  EXPECT_THAT(message, HasSubstr("openai-responses"));
  EXPECT_THAT(message, HasSubstr("anthropic"));
  // The URL does not decide: an Anthropic host with the openai setting speaks OpenAI.
  absl::StatusOr<WireRequest> w =
      BuildWireRequest(Request("https://api.anthropic.com/v1", "openai"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->provider, Provider::kOpenAi);
  EXPECT_EQ(w->url, "https://api.anthropic.com/v1/chat/completions");
}

TEST(Provider, OpenAiRequest) {
  absl::StatusOr<WireRequest> w = BuildWireRequest(Request("http://h/v1", "openai"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->url, "http://h/v1/chat/completions");
  EXPECT_THAT(w->headers, Contains("Authorization: Bearer k"));
  Json body = Json::parse(w->body.Text());
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["messages"][0]["content"], "hi");
}

TEST(Provider, OpenAiWithoutKeySendsNoAuthorization) {
  absl::StatusOr<WireRequest> w = BuildWireRequest(Request("http://localhost:11434/v1", "", ""));
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& h : w->headers) EXPECT_THAT(h, Not(HasSubstr("Authorization")));
}

TEST(Provider, AnthropicRequest) {
  absl::StatusOr<WireRequest> w = BuildWireRequest(Request("http://h/v1", "anthropic"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->provider, Provider::kAnthropic);
  EXPECT_EQ(w->url, "http://h/v1/messages");
  EXPECT_THAT(w->headers, Contains("x-api-key: k"));
  EXPECT_THAT(w->headers, Contains("anthropic-version: 2023-06-01"));
  Json body = Json::parse(w->body.Text());
  EXPECT_EQ(body["max_tokens"], kAnthropicMaxTokens);
  EXPECT_EQ(body["stream"], true);
}

TEST(Provider, ConfigurationErrorsSayWhatToSet) {
  EXPECT_THAT(std::string(BuildWireRequest(Request("", "")).status().message()),
              HasSubstr("AGENT_BASE_URL"));
  ModelRequest no_model = Request("http://h/v1", "");
  no_model.settings.model.clear();
  EXPECT_THAT(std::string(BuildWireRequest(no_model).status().message()), HasSubstr("AGENT_MODEL"));
  EXPECT_THAT(BuildWireRequest(Request("https://api.openai.com/v1", "", "")).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(BuildWireRequest(Request("http://h/v1", "gemini")).status().message()),
              HasSubstr("AGENT_PROVIDER"));
}

TEST(Provider, DeepSeekGetsItsReasoningBack) {
  ModelRequest r = Request("https://api.deepseek.com/v1", "");
  r.messages.push_back({{"role", "assistant"}, {"content", "x"}, {"reasoning_content", "why"}});
  r.messages.push_back({{"role", "user"}, {"content", "more"}});
  Json deepseek = Json::parse(BuildWireRequest(r)->body.Text());
  EXPECT_EQ(deepseek["messages"][1]["reasoning_content"], "why");
  r.settings.base_url = "http://h/v1";
  Json other = Json::parse(BuildWireRequest(r)->body.Text());
  EXPECT_FALSE(other["messages"][1].contains("reasoning_content"));
}

TEST(Provider, AssemblerMatchesTheProvider) {
  EXPECT_NE(
      dynamic_cast<OpenAiStreamAssembler*>(MakeStreamAssembler(Provider::kOpenAi, nullptr).get()),
      nullptr);
  EXPECT_NE(dynamic_cast<AnthropicStreamAssembler*>(
                MakeStreamAssembler(Provider::kAnthropic, nullptr).get()),
            nullptr);
  EXPECT_NE(dynamic_cast<ResponsesStreamAssembler*>(
                MakeStreamAssembler(Provider::kOpenAiResponses, nullptr).get()),
            nullptr);
}

}  // namespace
}  // namespace agent::daemon::llm
