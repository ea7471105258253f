#include "daemon/session/compactor.h"

#include <atomic>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_model_client.h"
#include "tests/fakes/status_matchers.h"

namespace agent::daemon {
namespace {

using ::agent::testing::FakeModelClient;
using ::agent::testing::FakeScript;
using ::agent::testing::IsOk;
using ::agent::testing::StatusIs;
using ::agent::testing::TextReply;
using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

Json ToolCall(const std::string& id, const std::string& name, const std::string& args) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}

// A turn with a tool call and its result, as the transcript holds it.
Json Conversation(const std::string& tool_output = "hello world") {
  return Json::array(
      {{{"role", "user"}, {"content", "fix the bug in a.cc"}},
       {{"role", "assistant"},
        {"content", "Reading it."},
        {"tool_calls", Json::array({ToolCall("c1", "read_file", R"({"path":"a.cc"})")})}},
       {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", tool_output}},
       {{"role", "assistant"}, {"content", "Fixed line 3."}}});
}

class CompactorTest : public ::testing::Test {
 protected:
  // The messages of the one request the model got.
  Json Request() {
    agent::MutexLock l(&script_->mu);
    EXPECT_EQ(script_->requests.size(), 1u);
    return script_->requests.empty() ? Json::array() : script_->requests.front();
  }

  std::shared_ptr<FakeScript> script_ = std::make_shared<FakeScript>();
  FakeModelClient model_{script_};
  ModelSettings settings_{.base_url = "http://x", .api_key = "k", .model = "m", .provider = ""};
};

TEST_F(CompactorTest, AsksForASummaryOfTheConversationAsPlainText) {
  script_->Add(TextReply("the summary"));
  auto summary = Summarize(model_, settings_, Conversation(), nullptr);
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(*summary, "the summary");

  // A system message and one user message: no tool call in the request needs its result.
  Json req = Request();
  ASSERT_EQ(req.size(), 2u);
  EXPECT_EQ(req[0]["role"], "system");
  EXPECT_THAT(req[0]["content"].get<std::string>(), HasSubstr("summarise"));
  EXPECT_EQ(req[1]["role"], "user");
  EXPECT_FALSE(req[1].contains("tool_calls"));
  const std::string text = req[1]["content"].get<std::string>();
  EXPECT_THAT(text, StartsWith("Summarise the conversation below for your own future reference."));
  EXPECT_THAT(text, EndsWith("</conversation>"));
  EXPECT_THAT(text, AllOf(HasSubstr("<conversation>\n[user]\nfix the bug in a.cc\n"),
                          HasSubstr("[assistant]\nReading it.\n"),
                          HasSubstr("[tool call c1] read_file {\"path\":\"a.cc\"}\n"),
                          HasSubstr("[tool result c1]\nhello world\n"),
                          HasSubstr("[assistant]\nFixed line 3.\n")));
}

TEST_F(CompactorTest, ClipsHugeToolOutputToItsHeadAndTail) {
  const std::string huge = "HEAD" + std::string(20000, 'x') + "TAIL";
  script_->Add(TextReply("s"));
  ASSERT_THAT(Summarize(model_, settings_, Conversation(huge), nullptr), IsOk());
  const std::string text = Request()[1]["content"].get<std::string>();
  EXPECT_THAT(text, AllOf(HasSubstr("HEAD"), HasSubstr("TAIL"),
                          HasSubstr("[… 16008 characters left out …]"),
                          Not(HasSubstr(std::string(4001, 'x')))));
  EXPECT_LT(text.size(), 6000u);
}

TEST_F(CompactorTest, AnEmptySummaryIsAnError) {
  script_->Add(TextReply(""));
  EXPECT_THAT(Summarize(model_, settings_, Conversation(), nullptr),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("empty summary")));
}

TEST_F(CompactorTest, TheModelsErrorIsReturned) {
  script_->Add(absl::ResourceExhaustedError("rate limited"));
  EXPECT_THAT(Summarize(model_, settings_, Conversation(), nullptr),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("rate limited")));
}

TEST_F(CompactorTest, ACancelledRequestIsCancelled) {
  script_->Add(TextReply("never"));
  std::atomic<bool> cancelled{true};
  EXPECT_THAT(Summarize(model_, settings_, Conversation(), &cancelled),
              StatusIs(absl::StatusCode::kCancelled));
}

TEST(SummaryMessage, SaysTheTextIsASummaryOfCompactedMessages) {
  const std::string m = SummaryMessage("did X, Y is left");
  EXPECT_THAT(m, StartsWith("[The earlier part of this conversation was compacted."));
  EXPECT_THAT(m, EndsWith("\ndid X, Y is left"));
}

}  // namespace
}  // namespace agent::daemon
