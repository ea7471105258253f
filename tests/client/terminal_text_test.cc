#include "client/terminal/terminal_text.h"

#include <random>
#include <string>

#include "client/terminal/show_controls.h"
#include "common/utf8.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(DecodeUtf8Test, OverlongSurrogateAndTooLargeFormsAreNotCharacters) {
  // C0 AF would show as '/': a person reading a path must not see a slash that is not there.
  EXPECT_EQ(DecodeUtf8("..\xC0\xAF"
                       "etc"),
            U"..\uFFFD\uFFFDetc");
  EXPECT_EQ(DecodeUtf8("\xE0\x80\xAF"), U"\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(DecodeUtf8("\xED\xA0\x80"), U"\uFFFD\uFFFD\uFFFD");            // U+D800
  EXPECT_EQ(DecodeUtf8("\xF4\x90\x80\x80"), U"\uFFFD\uFFFD\uFFFD\uFFFD");  // U+110000
  EXPECT_EQ(DecodeUtf8("\xF4\x8F\xBF\xBF"), U"\U0010FFFF");
  EXPECT_EQ(DecodeUtf8("\xE2\x82\xAC\xC3\xA9/"), U"\u20AC\u00E9/");
  // What is shown of untrusted text is valid UTF-8 (show_controls.h promises it).
  for (const char* bytes : {"\xED\xA0\x80", "\xF4\x90\x80\x80", "..\xC0\xAF"}) {
    EXPECT_TRUE(IsValidUtf8(ShowControls(bytes))) << bytes;
  }
}

TEST(StripAnsiTest, RemovesCsiOscAndTwoByteEscapes) {
  EXPECT_EQ(StripAnsi("\x1b[1;31mred\x1b[0m plain"), "red plain");
  EXPECT_EQ(StripAnsi("\x1b]0;title\x07"
                      "after"),
            "after");
  EXPECT_EQ(StripAnsi("\x1b]8;;http://x\x1b\\link"), "link");
  EXPECT_EQ(StripAnsi("a\x1b"
                      "7b"),
            "ab");
  EXPECT_EQ(StripAnsi("trailing\x1b"), "trailing");
}

TEST(StripAnsiTest, AnEscapeBeforeAMultiByteCharacterKeepsTheWholeCharacter) {
  EXPECT_EQ(StripAnsi("a\x1b\xC3\xA9z"), "a\xC3\xA9z");          // ESC é
  EXPECT_EQ(StripAnsi("\x1b[1\xE2\x82\xAC!"), "\xE2\x82\xAC!");  // a CSI cut by €
  EXPECT_EQ(StripAnsi("\x1b[12;\x1b[0mok"), "ok");               // a CSI cut by another
  EXPECT_EQ(StripAnsi("x\x1b["), "x");
}

// The 8-bit forms: U+009B is CSI, U+009D OSC, U+0085 NEL. U+00A0 is no control.
TEST(StripAnsiTest, DropsC1Controls) {
  EXPECT_EQ(StripAnsi("a\xC2\x9B"
                      "31mred\xC2\x9D"
                      "0;t\xC2\x9C"
                      "b\xC2\x85"
                      "c"),
            "a31mred0;tbc");
  EXPECT_EQ(StripAnsi("\xC2\xA0\xC2\xA9\xC3\x9B"), "\xC2\xA0\xC2\xA9\xC3\x9B");
  EXPECT_EQ(StripAnsi("\x9B"
                      "1m"),
            "\xEF\xBF\xBD"
            "1m");  // a lone byte is no character
}

TEST(WithoutC1Test, KeepsC0AndRepairsBytes) {
  EXPECT_EQ(WithoutC1("a\x1b[1m\xC2\x9B"
                      "b\xC2\xA0\x9B"),
            "a\x1b[1mb\xC2\xA0\xEF\xBF\xBD");
  EXPECT_FALSE(HasTerminalControl("plain \xC3\xA9t\xC3\xA9 \xE2\x82\xAC"));
  for (const char* bad : {"a\x1b", "a\x07", "a\x7f", "a\xC2\x85", "a\x9B", "a\xFF"}) {
    EXPECT_TRUE(HasTerminalControl(bad)) << bad;
  }
}

TEST(StripAnsiTest, IllFormedBytesBecomeReplacementCharacters) {
  EXPECT_EQ(StripAnsi("a\xFF"), "a\xEF\xBF\xBD");
}

TEST(StripAnsiTest, OutputIsValidUtf8ForRandomBytes) {
  std::mt19937 rng(20261201);  // fixed seed: a failure is reproducible
  // Mostly the bytes that escapes and UTF-8 are made of.
  static constexpr unsigned char kBytes[] = {0x1B, '[',  ']',  ';',  '0',  'm',  0x07, '\\',
                                             0x20, 0x3F, 0x40, 0x7E, 0x80, 0xA9, 0xBF, 0xC3,
                                             0xE2, 0x82, 0xF0, 0x9F, 0xFF, 'a'};
  for (int round = 0; round < 5000; ++round) {
    std::string in(rng() % 24, '\0');
    for (char& c : in) {
      c = static_cast<char>(rng() % 4 == 0 ? rng() & 0xFF : kBytes[rng() % sizeof kBytes]);
    }
    const std::string out = StripAnsi(in);
    ASSERT_TRUE(IsValidUtf8(out)) << round;
    ASSERT_EQ(out.find('\x1b'), std::string::npos) << round;
  }
}

TEST(DisplayWidthTest, CountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth("hello"), 5);
  EXPECT_EQ(DisplayWidth("héllo"), 5);      // é is two bytes, one column
  EXPECT_EQ(DisplayWidth("日本"), 4);       // wide
  EXPECT_EQ(DisplayWidth("e\xcc\x81"), 1);  // e + combining acute
  EXPECT_EQ(DisplayWidth("\x1b[1mbold\x1b[0m"), 4);
  EXPECT_EQ(DisplayWidth("🙂"), 2);
  EXPECT_EQ(DisplayWidth("\xff"), 1);  // invalid byte: one replacement char
}

TEST(RowsTest, EndedLinesTakeAtLeastOneRow) {
  EXPECT_EQ(RowsWhenEnded(0, 80), 1);
  EXPECT_EQ(RowsWhenEnded(80, 80), 1);
  EXPECT_EQ(RowsWhenEnded(81, 80), 2);
  EXPECT_EQ(RowsWhenEnded(10, 0), 1);  // unknown width: 80
}

TEST(EditorRowTest, WrapsEagerlyLikeLibedit) {
  EXPECT_EQ(EditorRowAfter(U"", 10), 0);
  EXPECT_EQ(EditorRowAfter(U"123456789", 10), 0);
  EXPECT_EQ(EditorRowAfter(U"1234567890", 10), 1);  // a full row moves to the next
  EXPECT_EQ(EditorRowAfter(U"ab\ncd", 10), 1);
  EXPECT_EQ(EditorRowAfter(U"123456789日", 10), 1);   // a wide char that does not fit
  EXPECT_EQ(EditorRowAfter(U"\t\t", 10), 1);          // tabs to 8 and 16
  EXPECT_EQ(EditorRowAfter(U"12345678\x01", 10), 1);  // ^A takes two columns
}

TEST(LiveAreaTest, NothingDrawnErasesNothing) {
  LiveArea a;
  EXPECT_EQ(a.Erase(80, 0), "");
}

TEST(LiveAreaTest, ErasesFromTheFirstLiveRowDown) {
  LiveArea a;
  EXPECT_EQ(a.Draw({"partial text", "⠋ thinking · 1s"}, false, 80),
            "partial text\r\n⠋ thinking · 1s");
  // The cursor is on the spinner line: one row up to the first live row.
  EXPECT_EQ(a.Erase(80, 0), "\r\x1b[1A\x1b[J");
  a.Reset();
  EXPECT_EQ(a.Erase(80, 0), "");
}

TEST(LiveAreaTest, CountsWrappedRowsAtTheWidthOfNow) {
  LiveArea a;
  std::string long_line(100, 'x');
  a.Draw({long_line, "spin"}, false, 80);
  EXPECT_EQ(a.RowsAbove(80), 2);  // 100 columns wrap to two rows at 80
  EXPECT_EQ(a.RowsAbove(50), 2);
  EXPECT_EQ(a.RowsAbove(40), 3);  // after a resize the rows are counted anew
}

TEST(LiveAreaTest, TheEditorsRowsCountWhenItIsBelow) {
  LiveArea a;
  EXPECT_EQ(a.Draw({"spinner"}, true, 80), "spinner\r\n");
  EXPECT_TRUE(a.editor_below());
  EXPECT_EQ(a.Erase(80, 0), "\r\x1b[1A\x1b[J");
  EXPECT_EQ(a.Erase(80, 2), "\r\x1b[3A\x1b[J");
  // Only the editor: erase its rows.
  a.Draw({}, true, 80);
  EXPECT_EQ(a.Erase(80, 0), "\r\x1b[J");
}

TEST(LiveAreaTest, AFullLastLineLeavesTheCursorOnItsRow) {
  LiveArea a;
  a.Draw({std::string(80, 'x')}, false, 80);
  EXPECT_EQ(a.RowsAbove(80), 0);
  a.Draw({std::string(81, 'x')}, false, 80);
  EXPECT_EQ(a.RowsAbove(80), 1);
}

TEST(WrapTextTest, BreaksAtSpacesKeepingEscapesAndWideCharacters) {
  EXPECT_EQ(WrapText("short", 10), std::vector<std::string>{"short"});
  EXPECT_EQ(WrapText("aaa bbb ccc", 7), (std::vector<std::string>{"aaa bbb", "ccc"}));
  EXPECT_EQ(WrapText("aaa bbb ccc", 7, "  "), (std::vector<std::string>{"aaa bbb", "  ccc"}));
  // Escapes take no width and stay where they were.
  std::vector<std::string> rows = WrapText("\x1b[1maaa\x1b[0m bbb ccc", 7);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], "\x1b[1maaa\x1b[0m bbb");
  // A style that spans a break ends with its row and starts again after the indent.
  EXPECT_EQ(WrapText("\x1b[4maaa bbb\x1b[0m", 5, " "),
            (std::vector<std::string>{"\x1b[4maaa\x1b[0m", " \x1b[4mbbb\x1b[0m"}));
  EXPECT_EQ(WrapText("\x1b[1mabcdef\x1b[0m", 3),
            (std::vector<std::string>{"\x1b[1mabc\x1b[0m", "\x1b[1mdef\x1b[0m"}));
  // Wide characters count two columns and are never split.
  rows = WrapText("漢字漢字 漢字", 8);
  EXPECT_EQ(rows, (std::vector<std::string>{"漢字漢字", "漢字"}));
  rows = WrapText("漢字漢字漢", 5);
  EXPECT_EQ(rows, (std::vector<std::string>{"漢字", "漢字", "漢"}));
  for (const std::string& r : WrapText("one two three four five six seven", 9)) {
    EXPECT_LE(DisplayWidth(r), 9) << r;
  }
}

TEST(VisibleTest, ControlAndInvisibleCharactersAreShownAsEscapes) {
  EXPECT_EQ(Visible("plain /usr/bin/python3 é"), "plain /usr/bin/python3 é");
  EXPECT_EQ(Visible("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(Visible("\x1b[2J\x07\x7f"), "\\x1b[2J\\x07\\x7f");
  EXPECT_EQ(Visible("back\\slash"), "back\\\\slash");
  EXPECT_EQ(Visible("\xc2\x9b"
                    "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(Visible("safe\xe2\x80\xae"
                    "exe.txt"),
            "safe\\u202eexe.txt");  // right-to-left override
  EXPECT_EQ(Visible("a\xe2\x80\x8b"
                    "b"),
            "a\\u200bb");  // zero-width space
  EXPECT_EQ(Visible("\xff"), "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace agent::client
