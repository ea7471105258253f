#include "client/deny_message.h"

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

}  // namespace
}  // namespace agent::client
