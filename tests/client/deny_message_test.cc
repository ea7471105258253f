#include "client/text/deny_message.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

using Outcome = DenyMessageInput::Outcome;

TEST(DenyMessageInputTest, TypesEditsAndSendsOnEnter) {
  DenyMessageInput in;
  EXPECT_FALSE(in.active());
  in.Start();
  EXPECT_EQ(in.Feed("use ripgreX"), Outcome::kTyping);
  EXPECT_EQ(in.Feed("\x7f"), Outcome::kTyping);
  EXPECT_EQ(in.Feed("p \xC3\xA9"), Outcome::kTyping);
  EXPECT_EQ(in.Feed("\x7f"), Outcome::kTyping);    // one character, both bytes
  EXPECT_EQ(in.Feed("\x1b[A"), Outcome::kTyping);  // an arrow key is not text
  EXPECT_EQ(in.Feed("instead\r"), Outcome::kSend);
  EXPECT_EQ(in.text(), "use ripgrep instead");
}

TEST(DenyMessageInputTest, ALoneEscGoesBackAndCtrlUClears) {
  DenyMessageInput in;
  in.Start();
  in.Feed("abc\x15x");
  EXPECT_EQ(in.text(), "x");
  EXPECT_EQ(in.Feed("\x1b"), Outcome::kBack);
  EXPECT_FALSE(in.active());
  EXPECT_EQ(in.text(), "");
}

TEST(DenyMessageInputTest, TheLineKeepsTheEndInViewAndShowsControls) {
  DenyMessageInput in;
  in.Start();
  in.Feed("use \x1b");  // ESC starts a sequence: ignored
  in.Feed("make clean");
  EXPECT_EQ(in.Line(80), "No, and tell it: use make clean\u258f (Enter sends, Esc goes back)");
  in.Feed(std::string(200, 'x') + "END");
  const std::string line = in.Line(60);
  EXPECT_NE(line.find("xEND\u258f"), std::string::npos) << line;
  EXPECT_EQ(line.rfind("No, and tell it: ", 0), 0u);
}

}  // namespace
}  // namespace agent::client
