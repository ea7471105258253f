#include "client/view/seen_mark.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::client {
namespace {

TEST(SeenMarkTest, PathIsPerSessionAndTerminal) {
  EXPECT_EQ(SeenMarkPath("/s", "abc123", "pts/3"), "/s/seen/abc123@pts_3");
  EXPECT_EQ(SeenMarkPath("/s", "abc123", ""), "/s/seen/abc123@none");
  EXPECT_NE(SeenMarkPath("/s", "abc123", "pts/3"), SeenMarkPath("/s", "abc123", "pts/4"));
}

TEST(SeenMarkTest, NamesThatCouldLeaveTheDirectoryKeepNothing) {
  EXPECT_EQ(SeenMarkPath("/s", "../../etc/x", "pts/3"), "");
  EXPECT_EQ(SeenMarkPath("/s", "..", "pts/3"), "");
  EXPECT_EQ(SeenMarkPath("/s", "abc", "a b"), "");
}

TEST(SeenMarkTest, SavedMarkLoadsBack) {
  ::agent::testing::TempDir dir;
  std::string path = SeenMarkPath(dir.path(), "sess1", "pts/1");
  ASSERT_TRUE(SaveSeenMark(path, SeenMark{"ep0ch", 42, 7}).ok());
  std::optional<SeenMark> m = LoadSeenMark(path);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->epoch, "ep0ch");
  EXPECT_EQ(m->seq, 42u);
  EXPECT_EQ(m->messages, 7);
}

TEST(SeenMarkTest, AMissingOrDamagedFileIsNoMark) {
  ::agent::testing::TempDir dir;
  EXPECT_FALSE(LoadSeenMark(dir.path() + "/nothing").has_value());
  std::ofstream(dir.path() + "/bad") << "not a mark";
  EXPECT_FALSE(LoadSeenMark(dir.path() + "/bad").has_value());
}

TEST(SeenMarkTest, TheRuleGoesWhereTheTerminalLeft) {
  SeenMark m{"e1", 10, 4};
  EXPECT_EQ(AwayRuleBefore(m, "e1", 20, 9), std::optional<int64_t>(4));
  // Another epoch (the daemon restarted): the message count still says where.
  EXPECT_EQ(AwayRuleBefore(m, "e2", 3, 9), std::optional<int64_t>(4));
}

TEST(SeenMarkTest, NoRuleWhenNothingWasMissedOrTheMarkNoLongerFits) {
  SeenMark m{"e1", 10, 4};
  EXPECT_FALSE(AwayRuleBefore(std::nullopt, "e1", 20, 9).has_value());
  EXPECT_FALSE(AwayRuleBefore(m, "e1", 10, 4).has_value());  // the same seq
  EXPECT_FALSE(AwayRuleBefore(m, "e1", 12, 4).has_value());  // events but no message
  EXPECT_FALSE(AwayRuleBefore(m, "e1", 20, 3).has_value());  // compacted since
}

}  // namespace
}  // namespace agent::client
