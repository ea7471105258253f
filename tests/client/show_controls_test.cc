#include "client/terminal/show_controls.h"

#include <string>
#include <string_view>

#include "client/terminal/terminal_text.h"
#include "common/utf8.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(ShowControlsTest, OrdinaryTextAndNewlinesAndTabsStayAsTheyAre) {
  EXPECT_EQ(ShowControls("git commit -m 'zoë: 漢字 😀'"), "git commit -m 'zoë: 漢字 😀'");
  EXPECT_EQ(ShowControls("line one\n\tline two"), "line one\n\tline two");
  EXPECT_EQ(ShowControls(""), "");
}

TEST(ShowControlsTest, C0ControlsAndDelAreShownAsHex) {
  EXPECT_EQ(ShowControls("rm -rf /\x1b[2J"), "rm -rf /\\x1b[2J");
  EXPECT_EQ(ShowControls("a\rb"), "a\\x0db");  // a carriage return could hide "a"
  EXPECT_EQ(ShowControls("bell\x07"), "bell\\x07");
  EXPECT_EQ(ShowControls("del\x7f"), "del\\x7f");
  EXPECT_EQ(ShowControls(std::string_view("nul\0end", 7)), "nul\\x00end");
}

TEST(ShowControlsTest, C1ControlsBidiAndInvisibleCharactersAreShownAsCodePoints) {
  EXPECT_EQ(ShowControls("\xC2\x9B"
                         "2J"),
            "\\u009b2J");  // CSI on terminals that take 8-bit controls
  EXPECT_EQ(ShowControls("\xC2\x9D"
                         "0;x"),
            "\\u009d0;x");  // OSC
  EXPECT_EQ(ShowControls("safe\xE2\x80\xAE"
                         "txt.exe"),
            "safe\\u202etxt.exe");  // right-to-left override
  EXPECT_EQ(ShowControls("\xE2\x81\xA6"
                         "x"
                         "\xE2\x81\xA9"),
            "\\u2066x\\u2069");  // isolates
  EXPECT_EQ(ShowControls("a\xE2\x80\x8B"
                         "b"),
            "a\\u200bb");  // zero-width space
  EXPECT_EQ(ShowControls("\xEF\xBB\xBF"
                         "x"),
            "\\ufeffx");  // byte-order mark
  EXPECT_EQ(ShowControls("soft\xC2\xAD"
                         "hyphen"),
            "soft\\u00adhyphen");
}

TEST(ShowControlsTest, BackslashesAreNotDoubled) {
  EXPECT_EQ(ShowControls("C:\\dir\\x1b"), "C:\\dir\\x1b");
  // Unlike Visible, which doubles them so its escapes can be told apart.
  EXPECT_EQ(Visible("C:\\dir"), "C:\\\\dir");
}

TEST(ShowControlsTest, IllFormedBytesBecomeReplacementCharacters) {
  EXPECT_EQ(ShowControls("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  // A lone 0x9B byte is not left for a terminal to read as CSI.
  EXPECT_EQ(ShowControls("\x9B"
                         "2J"),
            "\xEF\xBF\xBD"
            "2J");
  for (std::string_view bad : {"\xE2\x80", "x\xF0\x9F\x98", "\x80\x80", "\xC3(", "\xFE\xFF"}) {
    const std::string shown = ShowControls(bad);
    EXPECT_TRUE(IsValidUtf8(shown)) << shown;
    EXPECT_NE(shown.find(kReplacementChar), std::string::npos) << shown;
  }
}

}  // namespace
}  // namespace agent::client
