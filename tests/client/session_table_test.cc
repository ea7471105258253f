#include "client/text/session_table.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000'000;

v1::Session Make(const std::string& id, const std::string& title, int msgs, int64_t age_s,
                 int attached) {
  v1::Session s;
  s.set_id(id);
  s.set_title(title);
  s.set_message_count(msgs);
  s.set_updated_unix_ms(kNow - age_s * 1000);
  s.set_attached_clients(attached);
  s.set_state(v1::SESSION_STATE_IDLE);
  s.set_workdir("/p");
  return s;
}

TEST(SessionTableTest, OneShotRunsOlderThanADayAreLeftOutWithTheirChildren) {
  std::vector<v1::Session> list = {
      Make("fresh-one-shot", "a", 2, 3600, 0), Make("old-one-shot", "b", 2, 2 * 86400, 0),
      Make("old-child", "c", 2, 2 * 86400, 0), Make("old-interactive", "d", 9, 9 * 86400, 0),
      Make("old-but-attached", "e", 2, 2 * 86400, 1)};
  list[2].set_parent_id("old-one-shot");
  list[2].set_depth(1);
  const std::set<std::string> one_shots = {"fresh-one-shot", "old-one-shot", "old-but-attached"};
  EXPECT_EQ(DropOldOneShots(list, one_shots, kNow), 2);
  std::vector<std::string> ids;
  for (const v1::Session& s : list) ids.push_back(s.id());
  EXPECT_EQ(ids,
            (std::vector<std::string>{"fresh-one-shot", "old-interactive", "old-but-attached"}));
}

TEST(SessionTableTest, HeaderAndColumnsAreAligned) {
  std::vector<v1::Session> s = {Make("0123456789abcdef0123", "fix the build", 12, 30, 1),
                                Make("fedcba9876543210ffff", "x\x1b[31m\ttitle", 1234, 90000, 0)};
  s[1].set_state(v1::SESSION_STATE_RUNNING);
  std::string out = SessionTable(s, kNow, {});
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "ID                STATE    MSGS  UPDATED  ATTACHED  TITLE");
  EXPECT_EQ(lines[1], "0123456789abcdef  idle     12    30s ago  1         fix the build");
  EXPECT_EQ(lines[2], "fedcba9876543210  running  1234  1d ago   0         x\\x1b[31m title");
  for (const std::string& l : lines) EXPECT_EQ(l.find("TITLE") == 0, false);
}

TEST(SessionTableTest, LongAddsUsageAllAddsTheProject) {
  v1::Session s = Make("0123456789abcdef", "t", 2, 5, 0);
  s.mutable_usage()->set_prompt_tokens(12000);
  s.mutable_usage()->set_completion_tokens(345);
  s.mutable_usage()->set_cached_tokens(9000);
  s.mutable_usage()->set_cache_write_tokens(2500);
  s.mutable_usage()->set_requests(7);
  s.mutable_usage()->set_retries(2);
  s.mutable_usage()->set_cost_usd(0.125);
  v1::Session none = Make("fedcba9876543210", "u", 1, 5, 0);
  std::string out = SessionTable({s, none}, kNow, {/*all=*/true, /*long_form=*/true});
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(
      lines[0],
      HasSubstr("ATTACHED  IN   OUT  CACHED  WRITTEN  REQS  RETRIES  COST   PROJECT  TITLE"));
  EXPECT_THAT(lines[1],
              HasSubstr("0         12k  345  9000    2500     7     2        $0.12  /p       t"));
  EXPECT_THAT(lines[2],
              HasSubstr("0         0    0    0       0        0     0        -      /p       u"));
}

TEST(SessionTableTest, LongTitlesAreCut) {
  std::string out = SessionTable({Make("a", std::string(200, 'w'), 1, 1, 0)}, kNow, {});
  EXPECT_THAT(out, HasSubstr(std::string(59, 'w') + "…\n"));
  EXPECT_EQ(out.find(std::string(61, 'w')), std::string::npos);
}

TEST(SessionTableTest, JsonHasNumbersNotStrings) {
  v1::Session s = Make("abc", "t", 3, 1, 2);
  s.mutable_usage()->set_prompt_tokens(7);
  s.mutable_usage()->set_retries(3);
  auto j = ParseJson(SessionsJson({s}));
  ASSERT_TRUE(j.ok());
  ASSERT_TRUE(j->is_array());
  const Json& first = (*j)[0];
  EXPECT_EQ(first["id"], "abc");
  EXPECT_TRUE(first["messages"].is_number_integer());
  EXPECT_EQ(first["updated_unix_ms"], kNow - 1000);
  EXPECT_EQ(first["usage"]["prompt_tokens"], 7);
  EXPECT_EQ(first["usage"]["retries"], 3);
  EXPECT_EQ(first["state"], "idle");
  EXPECT_EQ(SessionsJson({}), "[]\n");
}

TEST(SessionTableTest, AgesTakeOneUnit) {
  EXPECT_EQ(ParseAge("30d"), int64_t{30} * 86400 * 1000);
  EXPECT_EQ(ParseAge("12h"), int64_t{12} * 3600 * 1000);
  EXPECT_EQ(ParseAge("90m"), int64_t{90} * 60 * 1000);
  EXPECT_EQ(ParseAge("45s"), 45000);
  EXPECT_EQ(ParseAge("0s"), 0);
  for (const char* bad : {"", "d", "30", "30x", "-3d", "3.5d", "1e3d", "99999999999d", " 3d"}) {
    EXPECT_FALSE(ParseAge(bad).has_value()) << bad;
  }
}

// A title is the first prompt (or the model's): no escape of any form reaches `agent ls`, and
// none is silently dropped either: what is there is shown.
TEST(SessionTableTest, PrintableLineShowsEscapesAndBidiControlsAndSpacesTabs) {
  EXPECT_EQ(PrintableLine("a\x1b[2Jb\tc\xC2\x9B"
                          "31md\xC2\x85"
                          "e\nf"),
            "a\\x1b[2Jb c\\u009b31md\\u0085e f");
  // U+202E RIGHT-TO-LEFT OVERRIDE and U+2066 LEFT-TO-RIGHT ISOLATE would reorder the line.
  EXPECT_EQ(PrintableLine("invoice\xE2\x80\xAE"
                          "fdp.exe \xE2\x81\xA6"
                          "x"),
            "invoice\\u202efdp.exe \\u2066x");
}

}  // namespace
}  // namespace agent::client
