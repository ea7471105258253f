#include "client/text/markdown_table.h"

#include <string>
#include <vector>

#include "client/terminal/terminal_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::ElementsAre;

TEST(MarkdownTableTest, RowsStartWithABarAndHaveAnother) {
  EXPECT_TRUE(IsTableRow("| a | b |"));
  EXPECT_TRUE(IsTableRow("|a|"));
  EXPECT_TRUE(IsTableRow("| a | b"));  // no closing bar
  EXPECT_TRUE(IsTableRow("   | indented | by three |"));
  EXPECT_TRUE(IsTableRow("| a | b |   "));
  EXPECT_FALSE(IsTableRow("a | b"));  // GitHub's leading-bar-less rows are not taken
  EXPECT_FALSE(IsTableRow("| lone bar"));
  EXPECT_FALSE(IsTableRow("|"));
  EXPECT_FALSE(IsTableRow(""));
  EXPECT_FALSE(IsTableRow("text with | a bar"));
}

TEST(MarkdownTableTest, DelimitersAreDashesWithOptionalColons) {
  EXPECT_TRUE(IsTableDelimiter("|---|:--:|--:|"));
  EXPECT_TRUE(IsTableDelimiter("| --- | :- | -: |"));
  EXPECT_TRUE(IsTableDelimiter("|-|"));
  EXPECT_FALSE(IsTableDelimiter("| a | b |"));
  EXPECT_FALSE(IsTableDelimiter("|---|-x-|"));
  EXPECT_FALSE(IsTableDelimiter("|:|"));  // colons alone, no dash
  EXPECT_FALSE(IsTableDelimiter("|---| |"));
  EXPECT_FALSE(IsTableDelimiter("---|---"));  // not a row
  EXPECT_FALSE(IsTableDelimiter("||"));
}

TEST(MarkdownTableTest, CellsAreTrimmedAndAnEscapedBarIsText) {
  EXPECT_THAT(TableCells("| a | b |"), ElementsAre("a", "b"));
  EXPECT_THAT(TableCells("|a|b"), ElementsAre("a", "b"));
  EXPECT_THAT(TableCells("  |  spaced\t|\tout  |  "), ElementsAre("spaced", "out"));
  EXPECT_THAT(TableCells("| | x |"), ElementsAre("", "x"));
  EXPECT_THAT(TableCells("| a \\| b | c |"), ElementsAre("a | b", "c"));
  EXPECT_THAT(TableCells("| ends in \\|"), ElementsAre("ends in |"));  // not a closing bar
  EXPECT_THAT(TableCells("| back\\slash |"), ElementsAre("back\\slash"));
}

TEST(MarkdownTableTest, AlignmentsComeFromTheColons) {
  EXPECT_THAT(
      TableAlignments("|---|:---|:-:|--:|"),
      ElementsAre(CellAlign::kLeft, CellAlign::kLeft, CellAlign::kCenter, CellAlign::kRight));
}

TEST(MarkdownTableTest, LaysOutABoxWithColumnsAsWideAsTheirWidestCell) {
  std::vector<std::string> rows =
      LayoutTable({{"name", "n"}, {"a", "10"}, {"longer", "7"}},
                  {CellAlign::kLeft, CellAlign::kRight}, /*color=*/false, /*cols=*/0);
  EXPECT_THAT(rows, ElementsAre("┌────────┬────┐",  //
                                "│ name   │  n │",  //
                                "├────────┼────┤",  //
                                "│ a      │ 10 │",  //
                                "│ longer │  7 │",  //
                                "└────────┴────┘"));
}

TEST(MarkdownTableTest, CentersAndFillsShortRows) {
  std::vector<std::string> rows =
      LayoutTable({{"abcde", "x", "y"}, {"a"}, {"ab", "", "z"}}, {CellAlign::kCenter},
                  /*color=*/false, /*cols=*/0);       // missing: left
  EXPECT_THAT(rows, ElementsAre("┌───────┬───┬───┐",  //
                                "│ abcde │ x │ y │",  //
                                "├───────┼───┼───┤",  //
                                "│   a   │   │   │",  //
                                "│  ab   │   │ z │",  // odd room: the extra space after
                                "└───────┴───┴───┘"));
}

TEST(MarkdownTableTest, WidthIsDisplayWidthNotBytes) {
  std::vector<std::string> rows =
      LayoutTable({{"漢字", "é"}, {"ab", "xyz"}}, {}, /*color=*/false, /*cols=*/0);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1], "│ 漢字 │ é   │");
  EXPECT_EQ(rows[3], "│ ab   │ xyz │");
  for (const std::string& r : rows) EXPECT_EQ(DisplayWidth(r), DisplayWidth(rows[0])) << r;
}

TEST(MarkdownTableTest, ColorDimsTheLinesAndBoldsTheHeaderWithoutWidening) {
  const std::vector<std::vector<std::string>> cells = {{"h1", "h2"}, {"\x1b[3mit\x1b[0m", "x"}};
  std::vector<std::string> plain = LayoutTable(cells, {}, /*color=*/false, /*cols=*/0);
  std::vector<std::string> colored = LayoutTable(cells, {}, /*color=*/true, /*cols=*/0);
  ASSERT_EQ(plain.size(), colored.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(StripAnsi(colored[i]), StripAnsi(plain[i])) << i;
  }
  EXPECT_EQ(plain[3], "│ \x1b[3mit\x1b[0m │ x  │");  // a styled cell's escapes take no width
  EXPECT_NE(colored[1].find(" \x1b[1mh1\x1b[0m "), std::string::npos) << colored[1];
  EXPECT_EQ(colored[0].rfind("\x1b[2m┌", 0), 0u) << colored[0];
}

TEST(MarkdownTableTest, TooWideForTheTerminalIsNotBoxed) {
  const std::vector<std::vector<std::string>> cells = {{"a", "bb"}, {"ccc", "d"}};
  // Boxed it is 1 + (3 + 3) + (2 + 3) = 12 columns.
  std::vector<std::string> fits = LayoutTable(cells, {}, /*color=*/false, /*cols=*/12);
  ASSERT_EQ(fits.size(), 5u);
  EXPECT_EQ(DisplayWidth(fits[0]), 12);
  EXPECT_THAT(LayoutTable(cells, {}, /*color=*/false, /*cols=*/11),
              ElementsAre("a │ bb", "ccc │ d"));
}

}  // namespace
}  // namespace agent::client
