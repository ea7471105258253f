#include "daemon/tools/text_util.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace agent::daemon::tools {
namespace {

// "aé€😀": 1 + 2 + 3 + 4 bytes; character starts at 0, 1, 3, 6 and the end at 10.
const std::string kMixed = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";

TEST(Utf8BoundaryTest, FloorBacksUpToTheStartOfACharacter) {
  const size_t want[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
  for (size_t pos = 0; pos <= kMixed.size(); ++pos) {
    EXPECT_EQ(Utf8FloorBoundary(kMixed, pos), want[pos]) << pos;
  }
}

TEST(Utf8BoundaryTest, CeilMovesOnToTheNextCharacter) {
  const size_t want[] = {0, 1, 3, 3, 6, 6, 6, 10, 10, 10, 10};
  for (size_t pos = 0; pos <= kMixed.size(); ++pos) {
    EXPECT_EQ(Utf8CeilBoundary(kMixed, pos), want[pos]) << pos;
  }
}

TEST(Utf8BoundaryTest, PastTheEndIsTheEnd) {
  EXPECT_EQ(Utf8FloorBoundary("abc", 7), 3u);
  EXPECT_EQ(Utf8CeilBoundary("abc", 7), 3u);
  EXPECT_EQ(Utf8FloorBoundary("", 0), 0u);
  EXPECT_EQ(Utf8CeilBoundary("", 0), 0u);
}

TEST(Utf8BoundaryTest, TextThatIsNotUtf8IsCutWhereAsked) {
  // More continuation bytes than any character has: no lead byte within reach.
  const std::string junk = "a\x80\x80\x80\x80\x80z";
  EXPECT_EQ(Utf8FloorBoundary(junk, 5), 5u);
  EXPECT_EQ(Utf8CeilBoundary(junk, 1), 1u);
  // Plain binary without continuation bytes is cut anywhere.
  EXPECT_EQ(Utf8FloorBoundary(std::string_view("\xFF\xFE\xFD", 3), 1), 1u);
}

TEST(Utf8CompleteLengthTest, DropsOnlyASequenceCutShortAtTheEnd) {
  EXPECT_EQ(Utf8CompleteLength(""), 0u);
  EXPECT_EQ(Utf8CompleteLength("plain"), 5u);
  EXPECT_EQ(Utf8CompleteLength(kMixed), kMixed.size());
  EXPECT_EQ(Utf8CompleteLength("ab\xC3"), 2u);                // é without its second byte
  EXPECT_EQ(Utf8CompleteLength("ab\xE2\x82"), 2u);            // € cut after two of three
  EXPECT_EQ(Utf8CompleteLength("ab\xF0\x9F\x98"), 2u);        // 😀 cut after three of four
  EXPECT_EQ(Utf8CompleteLength("\xF0\x9F\x98\x80\xF0"), 4u);  // a whole one, then a lead
}

TEST(Utf8CompleteLengthTest, LeavesTextThatIsNotUtf8Alone) {
  EXPECT_EQ(Utf8CompleteLength("x\x80\x80\x80\x80"), 5u);  // no lead byte in reach
  EXPECT_EQ(Utf8CompleteLength("x\xFF"), 2u);              // not a lead byte at all
}

TEST(Utf8PrefixTest, CutsAtMostMaxBytesOnACharacterBoundary) {
  EXPECT_EQ(Utf8Prefix(kMixed, 100), kMixed);
  EXPECT_EQ(Utf8Prefix(kMixed, kMixed.size()), kMixed);
  EXPECT_EQ(Utf8Prefix(kMixed, 2), "a");
  EXPECT_EQ(Utf8Prefix(kMixed, 3), "a\xC3\xA9");
  EXPECT_EQ(Utf8Prefix(kMixed, 9), "a\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(Utf8Prefix(kMixed, 0), "");
  EXPECT_EQ(Utf8Prefix("abcdef", 4), "abcd");
}

TEST(AbslViewTest, SeesTheSameBytes) {
  const std::string s("a\0b", 3);
  absl::string_view v = AbslView(s);
  EXPECT_EQ(v.data(), s.data());
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(absl::StrCat(AbslView(s), "!"), std::string("a\0b!", 4));
}

}  // namespace
}  // namespace agent::daemon::tools
