#include "client/text/markdown.h"

#include "client/terminal/terminal_text.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

// The one row a line gives, without its newline.
std::string One(MarkdownStyler& md, std::string_view line) {
  std::string out = md.Line(line);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(MarkdownTest, WithoutColourEveryLinePassesUnchanged) {
  MarkdownStyler md(false);
  for (const char* l : {"# Title", "**bold** and `code`", "```python", "x = 1", "```", "- item"}) {
    EXPECT_EQ(One(md, l), l);
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
  EXPECT_EQ(StripAnsi(One(md, "## Plan")), "Plan");
  EXPECT_NE(One(md, "## Plan").find("\x1b[1;34m"), std::string::npos);
  EXPECT_EQ(StripAnsi(One(md, "- first")), "• first");
  EXPECT_EQ(StripAnsi(One(md, "  * nested")), "  • nested");
  EXPECT_EQ(StripAnsi(One(md, "3. third")), "3. third");
  EXPECT_EQ(StripAnsi(One(md, "> quoted")), "│ quoted");
  EXPECT_EQ(StripAnsi(One(md, "---")), std::string("────────────────────────────────"));
  EXPECT_EQ(One(md, ""), "");
  EXPECT_EQ(StripAnsi(One(md, "#hashtag")), "#hashtag");  // not a heading
}

TEST(MarkdownTest, FencesAreSetApartAndHighlighted) {
  MarkdownStyler md(true);
  EXPECT_EQ(StripAnsi(One(md, "```python")), "╭─ python");
  EXPECT_TRUE(md.in_code());
  std::string code = One(md, "if x: print('hi')  # note");
  EXPECT_EQ(StripAnsi(code), "│ if x: print('hi')  # note");
  EXPECT_NE(code.find("\x1b[35mif\x1b[0m"), std::string::npos);       // keyword
  EXPECT_NE(code.find("\x1b[32m'hi'\x1b[0m"), std::string::npos);     // string
  EXPECT_NE(code.find("\x1b[2;3m# note\x1b[0m"), std::string::npos);  // comment
  // Markdown is not applied inside code.
  EXPECT_EQ(StripAnsi(One(md, "**not bold**")), "│ **not bold**");
  EXPECT_EQ(StripAnsi(One(md, "```")), "╰─");
  EXPECT_FALSE(md.in_code());
  EXPECT_EQ(StripAnsi(One(md, "**bold again**")), "bold again");
}

TEST(MarkdownTest, AFenceClosesOnlyWithItsOwnKindAndLength) {
  MarkdownStyler md(true);
  One(md, "````");
  EXPECT_EQ(StripAnsi(One(md, "```")), "│ ```");
  EXPECT_TRUE(md.in_code());
  EXPECT_EQ(StripAnsi(One(md, "~~~~")), "│ ~~~~");
  One(md, "````");
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
  One(md, "```");
  EXPECT_EQ(StripAnsi(md.Partial("code")), "│ code");
  md.Reset();
  EXPECT_FALSE(md.in_code());
}

TEST(MarkdownTest, ItalicsAndLinks) {
  EXPECT_EQ(StyleInline("an *odd* one"), "an \x1b[3modd\x1b[0m one");
  EXPECT_EQ(StyleInline("an _odd_ one"), "an \x1b[3modd\x1b[0m one");
  EXPECT_EQ(StyleInline("snake_case_name and 2 * 3 * 4"), "snake_case_name and 2 * 3 * 4");
  EXPECT_EQ(StripAnsi(StyleInline("see [the docs](https://x.org/d)")),
            "see the docs (https://x.org/d)");
  EXPECT_NE(StyleInline("[t](u)").find("\x1b[4mt"), std::string::npos);  // underlined
  EXPECT_EQ(PlainInline("**b**, *i*, [t](https://u), <https://v>, `c`"),
            "b, i, t (https://u), https://v, `c`");
  EXPECT_EQ(PlainInline("[not a link] (x)"), "[not a link] (x)");
}

TEST(MarkdownTest, PlainModeKeepsTheStructureWithoutMarkersOrEscapes) {
  MarkdownStyler md(MarkdownMode::kPlain);
  EXPECT_EQ(One(md, "## The **plan**"), "The plan");
  EXPECT_EQ(One(md, "- a **bold** step"), "• a bold step");
  EXPECT_EQ(One(md, "```python"), "╭─ python");
  EXPECT_EQ(One(md, "x = '**'"), "│ x = '**'");
  EXPECT_EQ(One(md, "```"), "╰─");
  EXPECT_EQ(One(md, "> *quoted*"), "│ quoted");
  for (const char* l : {"# T", "**b**", "```", "x", "```", "| a |", "|---|", "| b |", "end"}) {
    EXPECT_EQ(md.Line(l).find('\x1b'), std::string::npos) << l;
  }
}

TEST(MarkdownTest, ATableIsHeldUntilItEndsAndLaidOutInABox) {
  MarkdownStyler md(MarkdownMode::kPlain);
  EXPECT_EQ(md.Line("| Name | Size |"), "");
  EXPECT_EQ(md.Line("|:-----|-----:|"), "");
  EXPECT_EQ(md.Line("| a.cc | 12 |"), "");
  EXPECT_TRUE(md.holding());
  EXPECT_EQ(md.Pending("").size(), 5u);  // shown live while it streams
  std::string out = md.Line("| **b.h** | 1234 |");
  out += md.Line("after");
  EXPECT_EQ(out,
            "┌──────┬──────┐\n"
            "│ Name │ Size │\n"
            "├──────┼──────┤\n"
            "│ a.cc │   12 │\n"
            "│ b.h  │ 1234 │\n"
            "└──────┴──────┘\n"
            "after\n");
  EXPECT_FALSE(md.holding());
  // A row without a delimiter under it is not a table; Flush gives back what is held.
  EXPECT_EQ(md.Line("| just | bars |"), "");
  EXPECT_EQ(md.Line("text"), "| just | bars |\ntext\n");
  md.Line("| x |");
  md.Line("|---|");
  EXPECT_EQ(StripAnsi(md.Flush()), "┌───┐\n│ x │\n├───┤\n└───┘\n");
}

TEST(MarkdownTest, ALongTableStreamingShowsItsHeadAndLastRowsLive) {
  MarkdownStyler md(MarkdownMode::kPlain);
  md.Line("| n |");
  md.Line("|---|");
  for (int i = 0; i < 50; ++i) md.Line("| " + std::to_string(i) + " |");
  std::vector<std::string> live = md.Pending("| 50");
  EXPECT_LE(live.size(), 13u);
  EXPECT_EQ(live[1], "│ n  │");
  EXPECT_EQ(live[3], "  … 43 more rows");
  EXPECT_EQ(live.back(), "| 50");
  std::string all = md.Flush();  // committed whole
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 54);
}

TEST(MarkdownTest, ATableTooWideForTheTerminalIsNotBoxed) {
  MarkdownStyler md(MarkdownMode::kPlain);
  md.SetWidth(20);
  md.Line("| first column | second column |");
  md.Line("|---|---|");
  EXPECT_EQ(md.Flush(), "first column │\n  second column\n");
}

TEST(MarkdownTest, ProseWrapsAtWordsWithAHangingIndent) {
  MarkdownStyler md(MarkdownMode::kColor);
  md.SetWidth(20);
  std::string out = md.Line("- one two three four five **six** seven");
  EXPECT_EQ(StripAnsi(out), "• one two three four\n  five six seven\n");
  MarkdownStyler plain(MarkdownMode::kPlain);
  plain.SetWidth(10);
  EXPECT_EQ(plain.Line("abcdefghijklmnop qr"), "abcdefghij\nklmnop qr\n");  // a long word is cut
  // Raw mode never wraps: the text is what the model wrote.
  MarkdownStyler raw(MarkdownMode::kRaw);
  raw.SetWidth(5);
  EXPECT_EQ(raw.Line("one two three"), "one two three\n");
}

}  // namespace
}  // namespace agent::client
