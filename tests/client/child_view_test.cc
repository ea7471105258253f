#include "client/text/child_view.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "client/terminal/terminal_text.h"
#include "client/view/renderer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

v1::ChildProgress Progress(const std::string& id, const std::string& title, int steps = 0) {
  v1::ChildProgress p;
  p.set_child_id(id);
  p.set_call_id("call-" + id);
  p.set_title(title);
  p.set_agent("general");
  p.set_state(v1::SESSION_STATE_RUNNING);
  p.set_steps(steps);
  return p;
}

v1::ChildProgress Finished(v1::ChildProgress p, v1::TurnOutcome outcome) {
  p.set_finished(true);
  p.set_outcome(outcome);
  p.set_current_tool("");
  return p;
}

v1::Event Event(const v1::ChildProgress& p) {
  v1::Event e;
  *e.mutable_child_progress() = p;
  return e;
}

v1::Event Asked(const std::string& call_id, const std::string& child_id, const std::string& title,
                const std::string& command) {
  v1::Event e;
  v1::PendingApproval* a = e.mutable_approval_requested()->mutable_approval();
  a->set_call_id(call_id);
  a->set_tool("bash");
  a->set_summary(command);
  a->set_child_session_id(child_id);
  a->set_child_title(title);
  return e;
}

v1::Event Resolved(const std::string& call_id, v1::Decision d) {
  v1::Event e;
  e.mutable_approval_resolved()->set_call_id(call_id);
  e.mutable_approval_resolved()->set_decision(d);
  e.mutable_approval_resolved()->set_client_name("me");
  return e;
}

RenderOptions Live() {
  RenderOptions o;
  o.live = true;
  o.own_client = "me";
  return o;
}

TEST(ChildViewTest, RunningLineHasTitleAgentToolStepsTokensAndTime) {
  v1::ChildProgress p = Progress("c1", "find callers", 3);
  p.set_current_tool("bash: grep -rn Foo src");
  p.mutable_usage()->set_prompt_tokens(1000);
  p.mutable_usage()->set_completion_tokens(234);
  EXPECT_EQ(ChildRunningLine(p, absl::Seconds(12), 0),
            "↳ find callers · general · bash · 3 steps · 1.2k tokens · 12s");
  p.clear_current_tool();
  p.set_steps(1);
  EXPECT_EQ(ChildRunningLine(p, absl::Seconds(125), 0),
            "↳ find callers · general · thinking · 1 step · 1.2k tokens · 2m05s");
  p.set_state(v1::SESSION_STATE_WAITING_APPROVAL);
  EXPECT_THAT(ChildRunningLine(p, absl::Seconds(1), 0), HasSubstr("· waiting for an answer ·"));
}

TEST(ChildViewTest, NarrowWidthCutsTheTitleFirstThenTheLine) {
  v1::ChildProgress p = Progress("c1", "a rather long title for a child session", 2);
  const std::string full = ChildRunningLine(p, absl::Seconds(1), 0);
  std::string cut = ChildRunningLine(p, absl::Seconds(1), 60);
  EXPECT_EQ(DisplayWidth(cut), 60);
  EXPECT_THAT(cut, HasSubstr("…"));
  EXPECT_THAT(cut, HasSubstr("2 steps · 0 tokens · 1s"));  // the figures stay in view
  EXPECT_EQ(cut.rfind("↳ a rather", 0), 0u);
  std::string tiny = ChildRunningLine(p, absl::Seconds(1), 20);
  EXPECT_EQ(DisplayWidth(tiny), 20);
  EXPECT_EQ(ChildRunningLine(p, absl::Seconds(1), DisplayWidth(full)), full);
}

TEST(ChildViewTest, ModelTextCannotReachTheTerminalAsEscapes) {
  v1::ChildProgress p = Progress("c1", "evil\x1b]0;pwned\x07\x1b[2J title\nnext");
  p.set_current_tool("bash\x1b[31m: rm");
  p.set_last_text("said \x1b[1mbold\r\x07");
  ChildBoard board;
  board.Update(p, kT0);
  for (const ChildLine& l : board.Lines(kT0, 200, /*detail=*/true)) {
    EXPECT_EQ(l.text.find('\x1b'), std::string::npos) << l.text;
    EXPECT_EQ(l.text.find('\x07'), std::string::npos) << l.text;
    EXPECT_EQ(l.text.find('\n'), std::string::npos) << l.text;
    EXPECT_EQ(l.text.find('\r'), std::string::npos) << l.text;
  }
  v1::PendingApproval a;
  a.set_child_title("t\x1b[2Jx");
  EXPECT_EQ(ChildApprovalMark(a), "[child: t\\x1b[2Jx] ");  // shown, never sent raw
}

TEST(ChildViewTest, LinesUpdateInPlaceAndFinishedChildrenCollapse) {
  ChildBoard board;
  EXPECT_FALSE(board.Update(Progress("c1", "one", 1), kT0));
  EXPECT_FALSE(board.Update(Progress("c2", "two", 1), kT0));
  EXPECT_FALSE(board.Update(Progress("c1", "one", 4), kT0 + absl::Seconds(3)));
  std::vector<ChildLine> lines = board.Lines(kT0 + absl::Seconds(5), 0, false);
  ASSERT_EQ(lines.size(), 2u);  // one line per child, updated in place
  EXPECT_THAT(lines[0].text, HasSubstr("one · general · thinking · 4 steps"));
  EXPECT_THAT(lines[0].text, HasSubstr("· 5s"));  // since it was first seen
  EXPECT_THAT(lines[1].text, HasSubstr("two"));

  v1::ChildProgress done = Finished(Progress("c1", "one", 6), v1::TURN_OUTCOME_DONE);
  EXPECT_TRUE(board.Update(done, kT0));
  EXPECT_FALSE(board.Update(done, kT0));                      // summarised once
  EXPECT_FALSE(board.Update(Progress("c1", "one", 6), kT0));  // a late event: no line back
  lines = board.Lines(kT0, 0, false);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].text, HasSubstr("two"));
  board.Clear();
  EXPECT_TRUE(board.empty());
}

TEST(ChildViewTest, SummarySaysOutcomeStepsTokensAndChildId) {
  v1::ChildProgress p =
      Finished(Progress("1a2b3c4d5e6f", "find callers", 5), v1::TURN_OUTCOME_DONE);
  p.mutable_usage()->set_prompt_tokens(12000);
  EXPECT_EQ(ChildSummaryLine(p, 0),
            "✓ find callers · general · done · 5 steps · 12.0k tokens · child 1a2b3c4d");
  p.set_outcome(v1::TURN_OUTCOME_CANCELLED);
  EXPECT_EQ(ChildSummaryLine(p, 0).rfind("✗ find callers · general · cancelled", 0), 0u);
}

TEST(ChildViewTest, DetailShowsToolAndLastTextOnlyWhenExpanded) {
  ChildBoard board;
  v1::ChildProgress p = Progress("c1", "one", 2);
  p.set_current_tool("bash: make -j2 test");
  p.set_last_text("Looking at the build now");
  board.Update(p, kT0);
  ASSERT_EQ(board.Lines(kT0, 0, false).size(), 1u);
  std::vector<ChildLine> lines = board.Lines(kT0, 0, true);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_FALSE(lines[0].detail);
  EXPECT_TRUE(lines[1].detail);
  EXPECT_EQ(lines[1].text, "    tool: bash: make -j2 test");
  EXPECT_EQ(lines[2].text, "    │ Looking at the build now");
  for (const ChildLine& l : board.Lines(kT0, 16, true)) EXPECT_LE(DisplayWidth(l.text), 15);
}

TEST(ChildViewTest, ManyChildrenAreCountedBeyondTheShownOnes) {
  ChildBoard board;
  for (int i = 0; i < ChildBoard::kMaxShown + 3; ++i) {
    board.Update(Progress("c" + std::to_string(i), "t"), kT0);
  }
  std::vector<ChildLine> lines = board.Lines(kT0, 0, false);
  ASSERT_EQ(lines.size(), static_cast<size_t>(ChildBoard::kMaxShown + 1));
  EXPECT_THAT(lines.back().text, HasSubstr("3 more running"));
}

TEST(ChildViewTest, DetailsStayWithinTheLineBudget) {
  ChildBoard board;
  for (int i = 0; i < ChildBoard::kMaxShown + 3; ++i) {
    v1::ChildProgress p = Progress("c" + std::to_string(i), "t");
    p.set_current_tool("bash: make");
    p.set_last_text("working");
    board.Update(p, kT0);
  }
  std::vector<ChildLine> lines = board.Lines(kT0, 0, true);
  EXPECT_EQ(lines.size(), static_cast<size_t>(ChildBoard::kMaxLines));
  int main_lines = 0;
  for (const ChildLine& l : lines) main_lines += l.detail ? 0 : 1;
  EXPECT_EQ(main_lines, ChildBoard::kMaxShown);  // every shown child keeps its own line
  EXPECT_THAT(lines.back().text, HasSubstr("3 more running"));
}

TEST(ChildViewTest, ASnapshotWaitingOnAChildAsksWithTheMark) {
  Renderer r(Live());
  RenderState st = r.NewState();
  v1::Event e;
  v1::Snapshot* s = e.mutable_snapshot();
  s->set_state(v1::SESSION_STATE_WAITING_APPROVAL);
  *s->mutable_pending_approval() =
      Asked("k1", "c1", "fix tests", "make").approval_requested().approval();
  EXPECT_THAT(r.Render(e, kT0, st), HasSubstr("? [child: fix tests] bash wants to run: make"));
  ASSERT_TRUE(st.pending_approval().has_value());
  EXPECT_EQ(st.pending_approval()->child_session_id(), "c1");
}

TEST(ChildViewTest, RendererKeepsOneLiveLinePerChildAndCommitsTheSummary) {
  Renderer r(Live());
  RenderState st = r.NewState();
  EXPECT_EQ(r.Render(Event(Progress("c1", "one", 1)), kT0, st), "");
  EXPECT_EQ(r.Render(Event(Progress("c2", "two", 1)), kT0, st), "");
  EXPECT_EQ(r.Render(Event(Progress("c1", "one", 2)), kT0, st), "");
  std::vector<std::string> live = r.LiveLines(st, kT0, 100);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_THAT(live[0], HasSubstr("one · general · thinking · 2 steps"));
  EXPECT_THAT(live[1], HasSubstr("two"));

  std::string out =
      r.Render(Event(Finished(Progress("c1", "one", 3), v1::TURN_OUTCOME_DONE)), kT0, st);
  EXPECT_THAT(out, HasSubstr("✓ one · general · done · 3 steps"));
  EXPECT_THAT(out, HasSubstr("child c1"));
  live = r.LiveLines(st, kT0, 100);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_THAT(live[0], HasSubstr("two"));

  st.ToggleChildDetail();
  v1::ChildProgress two = Progress("c2", "two", 2);
  two.set_last_text("halfway there");
  r.Render(Event(two), kT0, st);
  EXPECT_THAT(absl::StrJoin(r.LiveLines(st, kT0, 100), "\n"), HasSubstr("halfway there"));
  st.ToggleChildDetail();
  EXPECT_THAT(absl::StrJoin(r.LiveLines(st, kT0, 100), "\n"), Not(HasSubstr("halfway")));

  v1::Event ended;
  ended.mutable_turn_ended()->set_outcome(v1::TURN_OUTCOME_CANCELLED);
  r.Render(ended, kT0, st);
  EXPECT_THAT(absl::StrJoin(r.LiveLines(st, kT0, 100), "\n"), Not(HasSubstr("two")));
}

TEST(ChildViewTest, ChildApprovalIsMarkedWithItsTitle) {
  Renderer r(Live());
  RenderState st = r.NewState();
  std::string out = r.Render(Asked("k1", "child-1", "fix tests", "make test"), kT0, st);
  EXPECT_THAT(out, HasSubstr("? [child: fix tests] bash wants to run: make test"));
  ASSERT_TRUE(st.pending_approval().has_value());
  EXPECT_EQ(st.pending_approval()->child_session_id(), "child-1");
}

// Two children may wait at once: the second question is shown once the first is answered,
// and one answered elsewhere before it was shown is dropped.
TEST(ChildViewTest, SecondChildApprovalWaitsForTheFirst) {
  Renderer r(Live());
  RenderState st = r.NewState();
  r.Render(Asked("k1", "c1", "one", "make a"), kT0, st);
  EXPECT_EQ(r.Render(Asked("k2", "c2", "two", "make b"), kT0, st), "");
  EXPECT_EQ(r.Render(Asked("k3", "c3", "three", "make c"), kT0, st), "");
  EXPECT_EQ(st.pending_approval()->call_id(), "k1");
  EXPECT_EQ(r.Render(Resolved("k3", v1::DECISION_DENY), kT0, st), "");
  std::string out = r.Render(Resolved("k1", v1::DECISION_DENY), kT0, st);
  EXPECT_THAT(out, HasSubstr("denied by you"));
  EXPECT_THAT(out, HasSubstr("[child: two] bash wants to run: make b"));
  ASSERT_TRUE(st.pending_approval().has_value());
  EXPECT_EQ(st.pending_approval()->call_id(), "k2");
  EXPECT_TRUE(st.TurnRunning());
  out = r.Render(Resolved("k2", v1::DECISION_ALLOW_ONCE), kT0, st);
  EXPECT_THAT(out, HasSubstr("allowed by you"));
  EXPECT_FALSE(st.pending_approval().has_value());
}

}  // namespace
}  // namespace agent::client
