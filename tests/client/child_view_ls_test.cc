// Children in `agent ls` (session_table.h), `--json` events (json_events.h) and the choice of
// a session when none is named (child_view.h's IsChildSession).
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "client/terminal/terminal_text.h"
#include "client/text/child_view.h"
#include "client/text/json_events.h"
#include "client/text/session_table.h"
#include "common/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr int64_t kNow = 1'700'000'000'000;

v1::Session Make(const std::string& id, const std::string& title, const std::string& parent = "",
                 int depth = 0) {
  v1::Session s;
  s.set_id(id);
  s.set_title(title);
  s.set_updated_unix_ms(kNow - 1000);
  s.set_state(v1::SESSION_STATE_IDLE);
  s.set_parent_id(parent);
  s.set_depth(depth);
  if (depth > 0) s.set_agent("general");
  return s;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(ChildViewLsTest, ChildrenAreIndentedUnderTheirParent) {
  // Newest first, as SessionsOf gives them: the children are newer than their parent.
  std::vector<v1::Session> s = {Make("c2", "second child", "p1", 1),
                                Make("g1", "grandchild", "c1", 2),
                                Make("c1", "first child", "p1", 1),
                                Make("other", "another session"),
                                Make("p1", "the parent"),
                                Make("f1", "fork of the parent", "p1", 0)};
  std::vector<std::string> lines = Lines(SessionTable(s, kNow, {}));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[1].rfind("other ", 0), 0u);
  EXPECT_EQ(lines[2].rfind("p1 ", 0), 0u);
  EXPECT_EQ(lines[3].rfind("└ c2 ", 0), 0u);
  EXPECT_EQ(lines[4].rfind("└ c1 ", 0), 0u);
  EXPECT_EQ(lines[5].rfind("  └ g1 ", 0), 0u);
  EXPECT_EQ(lines[6].rfind("f1 ", 0), 0u);  // a fork is the person's own: not nested
  for (const std::string& l : lines) EXPECT_EQ(l.find("STATE") == std::string::npos, l != lines[0]);
  // The columns stay aligned with the indented ids.
  const int state_col = DisplayWidth(lines[0].substr(0, lines[0].find("STATE")));
  EXPECT_EQ(DisplayWidth(lines[5].substr(0, lines[5].find("idle"))), state_col);
  EXPECT_EQ(DisplayWidth(lines[1].substr(0, lines[1].find("idle"))), state_col);
}

TEST(ChildViewLsTest, EverySessionIsListedOnceEvenWithoutOrWithLoopingParents) {
  std::vector<v1::Session> s = {Make("orphan", "parent gone", "nowhere", 1),
                                Make("a", "loop a", "b", 1), Make("b", "loop b", "a", 1),
                                Make("self", "own parent", "self", 1)};
  std::string out = SessionTable(s, kNow, {});
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 5u);
  for (const char* id : {"orphan", "a ", "b ", "self"}) {
    EXPECT_THAT(out, ::testing::HasSubstr(id));
  }
}

TEST(ChildViewLsTest, JsonKeepsParentAgentAndDepth) {
  auto j = ParseJson(SessionsJson({Make("c1", "child", "p1", 1), Make("p1", "parent")}));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)[0]["parent_id"], "p1");
  EXPECT_EQ((*j)[0]["agent"], "general");
  EXPECT_EQ((*j)[0]["depth"], 1);
  EXPECT_FALSE((*j)[1].contains("depth"));
}

TEST(ChildViewLsTest, ChildEventsAreTaggedWithTheChildId) {
  v1::Event e;
  e.set_seq(7);
  e.mutable_child_progress()->set_child_id("kid-1");
  e.mutable_child_progress()->set_steps(2);
  auto j = ParseJson(EventJsonLine(e));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["child_id"], "kid-1");
  EXPECT_EQ((*j)["child_progress"]["steps"], 2);

  v1::Event a;
  a.mutable_approval_requested()->mutable_approval()->set_child_session_id("kid-2");
  auto ja = ParseJson(EventJsonLine(a));
  ASSERT_TRUE(ja.ok());
  EXPECT_EQ((*ja)["child_id"], "kid-2");

  v1::Event own;
  own.mutable_approval_requested()->mutable_approval()->set_call_id("c");
  auto jo = ParseJson(EventJsonLine(own));
  ASSERT_TRUE(jo.ok());
  EXPECT_FALSE(jo->contains("child_id"));
}

TEST(ChildViewLsTest, OnlyTaskSessionsAreChildren) {
  EXPECT_TRUE(IsChildSession(Make("c", "t", "p", 1)));
  EXPECT_FALSE(IsChildSession(Make("f", "fork", "p", 0)));  // a fork has a parent too
  EXPECT_FALSE(IsChildSession(Make("p", "own")));
}

}  // namespace
}  // namespace agent::client
