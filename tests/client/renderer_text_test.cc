#include "client/view/renderer_text.h"

#include <string>

#include "common/utf8.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(OneLineTest, NewlinesAndTabsBecomeSpaces) {
  EXPECT_EQ(OneLine("ls -la\n\tgrep x\r\n", 100), "ls -la  grep x  ");
  EXPECT_EQ(OneLine("", 10), "");
}

TEST(OneLineTest, CutsLongTextWithAnEllipsis) {
  EXPECT_EQ(OneLine("abc", 3), "abc");  // exactly max: whole
  EXPECT_EQ(OneLine("abcdef", 3), "abc…");
  EXPECT_EQ(OneLine(std::string(150, 'x'), kMaxArgsChars), std::string(100, 'x') + "…");
}

TEST(OneLineTest, NeverCutsInsideACharacter) {
  EXPECT_EQ(OneLine("a\xC3\xA9", 2), "a…");  // "aé" at 2 bytes would split é
  EXPECT_EQ(OneLine("a\xC3\xA9", 3), "a\xC3\xA9");
  const std::string mixed = "é漢😀é漢😀";
  for (size_t max = 0; max <= mixed.size(); ++max) {
    const std::string line = OneLine(mixed, max);
    EXPECT_TRUE(IsValidUtf8(line)) << max;
    EXPECT_LE(line.size(), max + std::string("…").size()) << max;
  }
}

TEST(SanitizedTest, PlainTextIsUnchanged) {
  EXPECT_EQ(Sanitized("plain text\nsecond line, zoë 漢字"), "plain text\nsecond line, zoë 漢字");
}

TEST(SanitizedTest, EscapesAndControlsAreShownAsNothing) {
  EXPECT_EQ(Sanitized("\x1b[1;31mred\x1b[0m plain"), "red plain");
  EXPECT_EQ(Sanitized("\x1b]0;title\x07"
                      "after"),
            "after");
  EXPECT_EQ(Sanitized("\x1b[2J\x1b[Hcleared"), "cleared");
  EXPECT_EQ(Sanitized("bell\x07, cr\r, del\x7f, bs\b."), "bell, cr, del, bs.");
  EXPECT_EQ(Sanitized(std::string("a\0b\x01"
                                  "c",
                                  5)),
            "abc");
}

TEST(SanitizedTest, C1ControlsAreDroppedAndBadBytesRepaired) {
  EXPECT_EQ(Sanitized("x\xC2\x9B"
                      "2Jy"),
            "x2Jy");  // U+009B, an 8-bit CSI
  EXPECT_EQ(Sanitized("x\x9B"
                      "2J"),
            "x\xEF\xBF\xBD"
            "2J");  // a lone 0x9B byte: U+FFFD, never the byte itself
  EXPECT_TRUE(IsValidUtf8(Sanitized("\xFF\xFE\xE2\x80")));
}

TEST(SanitizedTest, TabsBecomeSpaces) {
  EXPECT_EQ(Sanitized("a\tb"), "a    b");
  EXPECT_EQ(Sanitized("\x1b[1m\tbold"), "    bold");
}

}  // namespace
}  // namespace agent::client
