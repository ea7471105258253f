// An edit that runs without asking (POLICY_MODE_YES, an allow rule) still tells the people
// what it changed: its ToolResult event carries the diff (capped); the model is not sent it.
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
using ::testing::EndsWith;
using ::testing::HasSubstr;

class SessionEditDiffTest : public ::agent::testing::YesSessionTest {
 protected:
  // Runs one turn whose model makes `calls` in one reply; returns the ToolResult events.
  std::vector<v1::ToolResult> Run(std::vector<std::pair<std::string, std::string>> calls) {
    script_->Add(CallsReply(calls, "c"));
    script_->Add(TextReply("done"));
    agent::testing::EventRecorder rec;
    session_->Attach(&rec, "t", false, "", 0);
    EXPECT_TRUE(session_->SendPrompt("go", "t").ok());
    EXPECT_NE(rec.WaitTurnEnded(), nullptr);
    std::vector<v1::ToolResult> results;
    for (const EventPtr& e : rec.events()) {
      if (e->has_tool_result()) results.push_back(e->tool_result());
    }
    session_->Detach(&rec);
    return results;
  }
};

TEST_F(SessionEditDiffTest, AWriteRunWithoutAskingCarriesItsDiff) {
  std::vector<v1::ToolResult> r =
      Run({{"write_file", R"({"path":"new.txt","content":"one\ntwo\n"})"}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].is_error());
  EXPECT_THAT(r[0].diff(), HasSubstr("+++ b/new.txt"));
  EXPECT_THAT(r[0].diff(), HasSubstr("+one\n+two\n"));
  EXPECT_THAT(r[0].content(), ::testing::Not(HasSubstr("+one")));  // the model's text is as before
}

TEST_F(SessionEditDiffTest, AFailedEditAndOtherToolsCarryNone) {
  std::ofstream(workdir_ + "/a.txt") << "old\n";
  std::vector<v1::ToolResult> r =
      Run({{"edit_file", R"({"path":"a.txt","old_string":"absent","new_string":"x"})"},
           {"read_file", R"({"path":"a.txt"})"}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].is_error());
  EXPECT_EQ(r[0].diff(), "");
  EXPECT_EQ(r[1].diff(), "");
}

TEST_F(SessionEditDiffTest, AHugeDiffIsCutAtALine) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\\n";
  std::vector<v1::ToolResult> r =
      Run({{"write_file", R"({"path":"big.txt","content":")" + big + R"("})"}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].is_error()) << r[0].content();
  EXPECT_LE(r[0].diff().size(), (64u << 10) + 32);
  EXPECT_THAT(r[0].diff(), EndsWith("\n\\ (diff cut)\n"));
}

}  // namespace
}  // namespace agent::daemon
