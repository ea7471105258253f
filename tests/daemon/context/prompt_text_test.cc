#include "daemon/context/prompt_text.h"

#include "gtest/gtest.h"

namespace agent::daemon::context {
namespace {

TEST(OneLinePromptTextTest, ControlsAndLineSeparatorsBecomeQuestionMarks) {
  EXPECT_EQ(OneLinePromptText("a\nb\rc\td\x7f"
                              "e"),
            "a?b?c?d?e");
  // C1 (NEL U+0085, CSI U+009B) and U+2028 / U+2029.
  EXPECT_EQ(OneLinePromptText("x\xC2\x85y\xC2\x9Bz"), "x?y?z");
  EXPECT_EQ(OneLinePromptText("p\xE2\x80\xA8q\xE2\x80\xA9r"), "p?q?r");
}

TEST(OneLinePromptTextTest, OtherTextIsKeptAndIllFormedBytesRepaired) {
  EXPECT_EQ(OneLinePromptText("/home/zoë/项目 (1)"), "/home/zoë/项目 (1)");
  EXPECT_EQ(OneLinePromptText("\xC2\xA0"), "\xC2\xA0");  // U+00A0 is no control
  EXPECT_EQ(OneLinePromptText("a\xFF"
                              "b"),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(OneLinePromptTextTest, CutOnACharacterBoundary) {
  EXPECT_EQ(OneLinePromptText("abé", 3), "ab");
  EXPECT_EQ(OneLinePromptText("abé", 4), "abé");
}

}  // namespace
}  // namespace agent::daemon::context
