#include "daemon/llm/stream_utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

const std::string R(kReplacementChar);

// Expected values are Python's bytes.decode("utf-8", "replace"), which follows the same
// maximal-subpart rule as WHATWG's decoder.
TEST(StreamUtf8, ValidTextIsUnchanged) {
  const std::string text = "plain, wörld, 中文, 😀, \xE2\x80\xA8";
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(ReplaceInvalidUtf8(text), text);
  EXPECT_TRUE(IsValidUtf8(""));
}

TEST(StreamUtf8, StrayBytesBecomeOneReplacementEach) {
  EXPECT_EQ(ReplaceInvalidUtf8("a\xFF"
                               "b"),
            "a" + R + "b");
  EXPECT_EQ(ReplaceInvalidUtf8("\x80\x80"), R + R);
  EXPECT_EQ(ReplaceInvalidUtf8("\xF5"), R);
}

TEST(StreamUtf8, TruncatedSequenceIsOneReplacement) {
  EXPECT_EQ(ReplaceInvalidUtf8("\xC3"), R);
  EXPECT_EQ(ReplaceInvalidUtf8("\xE2\x82"), R);
  EXPECT_EQ(ReplaceInvalidUtf8("\xE2\x82x"), R + "x");
  EXPECT_EQ(ReplaceInvalidUtf8("\xF0\x9F\x98"), R);
  EXPECT_EQ(ReplaceInvalidUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

TEST(StreamUtf8, OverlongSurrogateAndTooLargeAreIllFormed) {
  EXPECT_EQ(ReplaceInvalidUtf8("\xC0\xAF"), R + R);                  // overlong '/'
  EXPECT_EQ(ReplaceInvalidUtf8("\xE0\x80\xAF"), R + R + R);          // overlong '/'
  EXPECT_EQ(ReplaceInvalidUtf8("\xED\xA0\x80"), R + R + R);          // U+D800
  EXPECT_EQ(ReplaceInvalidUtf8("\xF4\x90\x80\x80"), R + R + R + R);  // U+110000
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));
}

TEST(StreamUtf8, RepairInPlace) {
  std::string s = "ok\xFF";
  RepairUtf8(&s);
  EXPECT_EQ(s, "ok" + R);
  std::string valid = "fine ü";
  RepairUtf8(&valid);
  EXPECT_EQ(valid, "fine ü");
}

}  // namespace
}  // namespace agent::daemon::llm
