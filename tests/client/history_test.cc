#include "client/text/history.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(HistoryTest, ReadsRolesContentAndCallsOfTheOpenAiShape) {
  auto h = ParseHistory(R"([
    {"role":"user","content":"hi \u00e9"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"a","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}},
      {"id":"b","type":"function"}]},
    {"role":"tool","tool_call_id":"a","content":"x\ny"}])");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->size(), 3u);
  EXPECT_EQ((*h)[0].role, "user");
  EXPECT_EQ((*h)[0].content, "hi \xc3\xa9");
  EXPECT_EQ((*h)[1].content, "");  // null content reads as empty
  ASSERT_EQ((*h)[1].calls.size(), 2u);
  EXPECT_EQ((*h)[1].calls[0].name, "bash");
  EXPECT_EQ((*h)[1].calls[0].arguments, R"({"command":"ls"})");
  EXPECT_EQ((*h)[1].calls[1].name, "");  // a call without its function is still shown
  EXPECT_EQ((*h)[2].content, "x\ny");
}

TEST(HistoryTest, AMessageWithAnImageShowsItsTextAndWhereTheImageWas) {
  auto h = ParseHistory(R"([{"role":"user","content":[
    {"type":"text","text":"what is this?"},
    {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}])");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].content, "what is this?\n[image]");
}

TEST(HistoryTest, SkipsWhatIsNotAMessageAndRefusesWhatIsNotAList) {
  auto h = ParseHistory(R"([1, "two", {"role":"user","content":7,"tool_calls":{}}])");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].content, "");
  EXPECT_TRUE((*h)[0].calls.empty());
  EXPECT_TRUE(absl::IsInvalidArgument(ParseHistory(R"({"role":"user"})").status()));
  auto broken = ParseHistory("[{\"role\":");
  EXPECT_TRUE(absl::IsInvalidArgument(broken.status()));
  EXPECT_NE(broken.status().message().find("byte"), std::string::npos);
}

}  // namespace
}  // namespace agent::client
