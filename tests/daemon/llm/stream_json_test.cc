#include "daemon/llm/stream_json.h"

#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

TEST(StreamJsonTest, TrimWhitespaceTakesSpacesTabsAndLineEnds) {
  EXPECT_EQ(TrimWhitespace(" \t\r\n{\"a\":1}\r\n "), "{\"a\":1}");
  EXPECT_EQ(TrimWhitespace(" \n "), "");
  EXPECT_EQ(TrimWhitespace("a b"), "a b");
}

TEST(StreamJsonTest, MemberToleratesWhatAServerSends) {
  const Json obj = {{"a", 1}};
  ASSERT_NE(Member(obj, "a"), nullptr);
  EXPECT_EQ(*Member(obj, "a"), 1);
  EXPECT_EQ(Member(obj, "b"), nullptr);
  EXPECT_EQ(Member(Json::array({1}), "a"), nullptr);  // not an object
  EXPECT_EQ(Member(Json("text"), "a"), nullptr);
}

TEST(StreamJsonTest, ContentTextJoinsTheTextPartsOnly) {
  EXPECT_EQ(ContentText(Json("plain")), "plain");
  EXPECT_EQ(ContentText(Json::parse(R"([{"type":"text","text":"a"},
                                        {"type":"image_url","image_url":{"url":"x"}},
                                        {"type":"text","text":"b"}])")),
            "ab");
  EXPECT_EQ(ContentText(Json()), "");
  EXPECT_EQ(ContentText(Json::array({Json("not a part")})), "");
}

TEST(StreamJsonTest, Fnv1aContinuesAcrossSplits) {
  const uint64_t start = 1469598103934665603ULL;
  EXPECT_EQ(Fnv1a(Fnv1a(start, "ab"), "cd"), Fnv1a(start, "abcd"));
  EXPECT_NE(Fnv1a(start, "abcd"), Fnv1a(start, "abdc"));
}

}  // namespace
}  // namespace agent::daemon::llm
