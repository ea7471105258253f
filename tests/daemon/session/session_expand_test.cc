// The hooks of prompt expansion in a Session: what the clients see stays as typed, the
// transcript gets the expansion, and an attached file counts as read for edits.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "daemon/session/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/event_recorder.h"
#include "tests/fakes/fake_model_client.h"
#include "tests/fakes/yes_session_test.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using ::agent::testing::CallsReply;
using ::agent::testing::TextReply;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class SessionExpandTest : public ::agent::testing::YesSessionTest {
 protected:
  void Write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(workdir_ + "/" + rel).parent_path());
    std::ofstream(workdir_ + "/" + rel) << text;
  }
  // Sends `typed` expanded and waits for the turn's end; returns the user message the model got.
  std::string Run(const std::string& typed, std::string* event_text) {
    agent::testing::EventRecorder rec;
    session_->Attach(&rec, "t", false, "", 0);
    EXPECT_TRUE(session_->SendPrompt(typed, "t", {}, {}, session_->ExpandPrompt(typed)).ok());
    EXPECT_NE(rec.WaitTurnEnded(), nullptr);
    for (const EventPtr& e : rec.events()) {
      if (e->has_user_message()) *event_text = e->user_message().text();
    }
    session_->Detach(&rec);
    agent::MutexLock l(&script_->mu);
    return script_->requests.front()[1]["content"].get<std::string>();
  }
};

TEST_F(SessionExpandTest, AMentionedFileIsInTheTranscriptAndCanBeEditedAtOnce) {
  Write("a.txt", "old\n");
  script_->Add(CallsReply(
      {{"edit_file", R"({"path":"a.txt","old_string":"old","new_string":"new"})"}}, "c"));
  script_->Add(TextReply("done"));
  std::string shown;
  std::string sent = Run("change @a.txt", &shown);
  EXPECT_EQ(shown, "change @a.txt");
  EXPECT_THAT(sent, StartsWith("change @a.txt\n\n<mention path=\"a.txt\" tool=\"read_file\">"));
  agent::MutexLock l(&script_->mu);
  ASSERT_EQ(script_->requests.size(), 2u);
  EXPECT_THAT(script_->requests[1].back()["content"].get<std::string>(), HasSubstr("Edited a.txt"));
}

TEST_F(SessionExpandTest, ACustomCommandReachesTheModelExpanded) {
  Write(".agent/commands/greet.md", "Say hello to $1.\n");
  script_->Add(TextReply("hello"));
  std::string shown;
  EXPECT_EQ(Run("/greet Ada", &shown), "Say hello to Ada.\n");
  EXPECT_EQ(shown, "/greet Ada");
}

}  // namespace
}  // namespace agent::daemon
