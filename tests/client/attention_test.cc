#include "client/view/attention.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(AttentionTest, FocusReportsAreTakenOutOfTheInput) {
  Attention a(true);
  EXPECT_FALSE(a.focused());
  EXPECT_EQ(a.Filter("ab\x1b[Icd"), "abcd");
  EXPECT_TRUE(a.focused());
  EXPECT_EQ(a.Filter("\x1b[O"), "");
  EXPECT_FALSE(a.focused());
  EXPECT_EQ(a.Filter("\x1b[A\x1b"), "\x1b[A\x1b");  // arrow keys and Esc stay
}

TEST(AttentionTest, AlertsOnlyWhenNotFocused) {
  Attention a(true);
  EXPECT_EQ(a.Alert("finished a turn"),
            "\a\x1b]9;agent: finished a turn\a\x1b]777;notify;agent;finished a turn\a");
  a.Filter("\x1b[I");
  EXPECT_EQ(a.Alert("finished a turn"), "");
}

TEST(AttentionTest, ControlCharactersCannotEndTheSequenceEarly) {
  Attention a(true);
  std::string s = a.Alert("x\a\x1b]52;c;evil\x1b\\y");
  EXPECT_EQ(s, "\a\x1b]9;agent: x]52;c;evil\\y\a\x1b]777;notify;agent;x]52;c;evil\\y\a");
}

TEST(AttentionTest, DisabledDoesNothing) {
  Attention a(false);
  EXPECT_EQ(a.Begin(), "");
  EXPECT_EQ(a.Alert("finished a turn"), "");
  EXPECT_EQ(a.Filter("\x1b[I"), "\x1b[I");
}

}  // namespace
}  // namespace agent::client
