#include "daemon/llm/error_text.h"

#include <string>

#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

TEST(OneLineTruncated, CollapsesWhitespaceAndCutsAtCodePoints) {
  EXPECT_EQ(OneLineTruncated("  a\n\n b\t c  "), "a b c");
  EXPECT_EQ(OneLineTruncated("ünïcødé", 3), "ünï");
}

// Error messages reach clients as protobuf strings, which must be valid UTF-8.
TEST(OneLineTruncated, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(OneLineTruncated("bad \xFF\xE2\x82 end"), "bad \xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(OneLineTruncated("\xFF\xFF\xFF", 2), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(CapExceededError, NamesTheCap) {
  absl::Status s = CapExceededError("the reply", size_t{32} << 20, "kMaxReplyBytes");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "the reply is over the 32 MiB cap (kMaxReplyBytes)");
  EXPECT_EQ(CapExceededError("x", 100, "kCap").message(), "x is over the 100 bytes cap (kCap)");
}

}  // namespace
}  // namespace agent::daemon::llm
