#include "client/markdown.h"

#include "client/terminal_text.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(MarkdownTest, WithoutColourEveryLinePassesUnchanged) {
  MarkdownStyler md(false);
  for (const char* l : {"# Title", "**bold** and `code`", "```python", "x = 1", "```", "- item"}) {
    EXPECT_EQ(md.Line(l), l);
  }
  EXPECT_EQ(md.Partial("**unfinished"), "**unfinished");
}

TEST(MarkdownTest, BoldAndCodeSpans) {
  EXPECT_EQ(StyleInline("a **b** c"), "a \x1b[1mb\x1b[0m c");
  EXPECT_EQ(StyleInline("run `make`"), "run \x1b[36mmake\x1b[0m");
  // Code inside bold switches bold back on after it.
  EXPECT_EQ(StyleInline("**x `y` z**"), "\x1b[1mx \x1b[36my\x1b[0m\x1b[1m z\x1b[0m");
  // Unclosed markers stay as they are (a line still streaming).
  EXPECT_EQ(StyleInline("**not yet"), "**not yet");
  EXPECT_EQ(StyleInline("a ` b"), "a ` b");
  EXPECT_EQ(StyleInline("****"), "****");
}

TEST(MarkdownTest, HeadingsListsQuotesAndRules) {
  MarkdownStyler md(true);
  EXPECT_EQ(StripAnsi(md.Line("## Plan")), "Plan");
  EXPECT_NE(md.Line("## Plan").find("\x1b[1;34m"), std::string::npos);
  EXPECT_EQ(StripAnsi(md.Line("- first")), "• first");
  EXPECT_EQ(StripAnsi(md.Line("  * nested")), "  • nested");
  EXPECT_EQ(StripAnsi(md.Line("3. third")), "3. third");
  EXPECT_EQ(StripAnsi(md.Line("> quoted")), "│ quoted");
  EXPECT_EQ(StripAnsi(md.Line("---")), std::string("────────────────────────────────"));
  EXPECT_EQ(md.Line(""), "");
  EXPECT_EQ(StripAnsi(md.Line("#hashtag")), "#hashtag");  // not a heading
}

TEST(MarkdownTest, FencesAreSetApartAndHighlighted) {
  MarkdownStyler md(true);
  EXPECT_EQ(StripAnsi(md.Line("```python")), "╭─ python");
  EXPECT_TRUE(md.in_code());
  std::string code = md.Line("if x: print('hi')  # note");
  EXPECT_EQ(StripAnsi(code), "│ if x: print('hi')  # note");
  EXPECT_NE(code.find("\x1b[35mif\x1b[0m"), std::string::npos);       // keyword
  EXPECT_NE(code.find("\x1b[32m'hi'\x1b[0m"), std::string::npos);     // string
  EXPECT_NE(code.find("\x1b[2;3m# note\x1b[0m"), std::string::npos);  // comment
  // Markdown is not applied inside code.
  EXPECT_EQ(StripAnsi(md.Line("**not bold**")), "│ **not bold**");
  EXPECT_EQ(StripAnsi(md.Line("```")), "╰─");
  EXPECT_FALSE(md.in_code());
  EXPECT_EQ(StripAnsi(md.Line("**bold again**")), "bold again");
}

TEST(MarkdownTest, AFenceClosesOnlyWithItsOwnKindAndLength) {
  MarkdownStyler md(true);
  md.Line("````");
  EXPECT_EQ(StripAnsi(md.Line("```")), "│ ```");
  EXPECT_TRUE(md.in_code());
  EXPECT_EQ(StripAnsi(md.Line("~~~~")), "│ ~~~~");
  md.Line("````");
  EXPECT_FALSE(md.in_code());
}

TEST(MarkdownTest, CommentMarkersDependOnTheLanguage) {
  EXPECT_NE(HighlightCode("int x; // c", "cpp").find("\x1b[2;3m// c"), std::string::npos);
  EXPECT_EQ(HighlightCode("#include <x>", "cpp").find("\x1b[2;3m"), std::string::npos);
  EXPECT_NE(HighlightCode("x=1 # c", "sh").find("\x1b[2;3m# c"), std::string::npos);
  EXPECT_NE(HighlightCode("select 1 -- c", "sql").find("\x1b[2;3m-- c"), std::string::npos);
  EXPECT_NE(HighlightCode("x = 42", "").find("\x1b[33m42"), std::string::npos);
  EXPECT_EQ(HighlightCode("x2 = y", "").find("\x1b[33m"), std::string::npos);  // not a number
}

TEST(MarkdownTest, PartialLinesDoNotChangeTheState) {
  MarkdownStyler md(true);
  EXPECT_EQ(StripAnsi(md.Partial("```py")), "```py");
  EXPECT_FALSE(md.in_code());
  EXPECT_EQ(StripAnsi(md.Partial("**half")), "**half");
  md.Line("```");
  EXPECT_EQ(StripAnsi(md.Partial("code")), "│ code");
  md.Reset();
  EXPECT_FALSE(md.in_code());
}

}  // namespace
}  // namespace agent::client
