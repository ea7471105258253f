#include "daemon/tools/output_cap.h"

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

TEST(OutputCapTest, SmallOutputIsKeptWhole) {
  OutputCap cap(4, 4);
  cap.Append("abc");
  cap.Append("def");
  EXPECT_EQ(cap.Render(), "abcdef");
  EXPECT_EQ(cap.omitted_bytes(), 0u);
  EXPECT_EQ(cap.total_bytes(), 6u);
}

TEST(OutputCapTest, KeepsHeadAndTailAndCountsTheMiddle) {
  OutputCap cap(3, 3);
  for (char c = 'a'; c <= 'z'; ++c) cap.Append(std::string(1, c));
  EXPECT_EQ(cap.Render(), "abc\n… 20 bytes omitted …\nxyz");
  EXPECT_EQ(cap.omitted_bytes(), 20u);
}

TEST(OutputCapTest, OneHugeChunk) {
  OutputCap cap(2, 2);
  cap.Append(std::string(1000, 'm') + "END");
  EXPECT_EQ(cap.Render(), "mm\n… 999 bytes omitted …\nND");
}

TEST(OutputCapTest, CutsDoNotSplitUtf8Characters) {
  // The head limit falls inside the first "é", the tail limit inside the last one: both
  // characters go to the omitted middle rather than being split.
  OutputCap cap(4, 3);
  cap.Append(
      "aaa\xC3\xA9"
      "0123456789"
      "\xC3\xA9zz");
  EXPECT_EQ(cap.Render(), "aaa\n… 14 bytes omitted …\nzz");
  EXPECT_EQ(cap.omitted_bytes(), 14u);
  OutputCap whole(4, 4);
  whole.Append(
      "aaa\xC3\xA9"
      "0123456789"
      "\xC3\xA9zz");
  EXPECT_EQ(whole.Render(), "aaa\n… 12 bytes omitted …\n\xC3\xA9zz");
}

}  // namespace
}  // namespace agent::daemon::tools
