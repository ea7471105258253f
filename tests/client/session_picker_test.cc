#include "client/commands/session_picker.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<v1::Session> Sessions(int n) {
  std::vector<v1::Session> out;
  for (int i = 0; i < n; ++i) {
    v1::Session s;
    s.set_id("id" + std::to_string(i) + "xxxxxxxxxx");
    s.set_title("title " + std::to_string(i));
    s.set_updated_unix_ms(1000);
    out.push_back(s);
  }
  return out;
}

TEST(PickerTest, ArrowsMoveEnterChoosesNewestFirst) {
  Picker p(Sessions(3), 2000);
  EXPECT_EQ(p.selected().id(), "id0xxxxxxxxxx");
  EXPECT_EQ(p.Feed("\x1b[B"), Picker::Result::kNone);
  EXPECT_EQ(p.Feed("\x1bOB\x1b[B"), Picker::Result::kNone);  // clamped at the last
  EXPECT_EQ(p.selected().id(), "id2xxxxxxxxxx");
  EXPECT_EQ(p.Feed("\x1b[A"), Picker::Result::kNone);
  EXPECT_EQ(p.Feed("\r"), Picker::Result::kChosen);
  EXPECT_EQ(p.selected().id(), "id1xxxxxxxxxx");
}

TEST(PickerTest, EscQAndCtrlCLeave) {
  for (const char* key : {"\x1b", "q", "\x03", "\x04"}) {
    Picker p(Sessions(2), 2000);
    EXPECT_EQ(p.Feed(key), Picker::Result::kCancelled) << key;
  }
  Picker p(Sessions(2), 2000);
  EXPECT_EQ(p.Feed("\x1b[C\x1b[1;5D"), Picker::Result::kNone);  // other keys do nothing
  EXPECT_EQ(p.selected().id(), "id0xxxxxxxxxx");
}

TEST(PickerTest, LinesMarkTheSelectionAndScroll) {
  Picker p(Sessions(5), 2000, /*rows=*/2);
  std::vector<std::string> lines = p.Lines(false, 80);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[1], StartsWith("› id0xxxxx  idle"));
  EXPECT_THAT(lines[1], HasSubstr("title 0"));
  EXPECT_THAT(lines[2], StartsWith("  id1xxxxx"));
  p.Feed("jjj");
  lines = p.Lines(false, 80);
  EXPECT_THAT(lines[1], StartsWith("  id2"));
  EXPECT_THAT(lines[2], StartsWith("› id3"));
  for (const std::string& l : p.Lines(true, 20)) EXPECT_LE(l.size(), 40u);
}

}  // namespace
}  // namespace agent::client
