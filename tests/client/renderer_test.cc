#include "client/view/renderer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/terminal/terminal_text.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

v1::Event Delta(const std::string& text) {
  v1::Event e;
  e.mutable_text_delta()->set_text(text);
  return e;
}
v1::Event Started() {
  v1::Event e;
  e.mutable_turn_started()->set_prompt("p");
  return e;
}
v1::Event Ready(const std::string& name, const std::string& args) {
  v1::Event e;
  e.mutable_tool_call_ready()->mutable_call()->set_name(name);
  e.mutable_tool_call_ready()->mutable_call()->set_arguments(args);
  return e;
}
v1::Event Output(const std::string& chunk) {
  v1::Event e;
  e.mutable_tool_output()->set_chunk(chunk);
  return e;
}
v1::Event Result(const std::string& content) {
  v1::Event e;
  e.mutable_tool_result()->set_content(content);
  return e;
}
v1::Event Ended(v1::TurnOutcome o) {
  v1::Event e;
  e.mutable_turn_ended()->set_outcome(o);
  return e;
}

std::string Lines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

RenderOptions Plain() { return RenderOptions{}; }
RenderOptions Live(bool color) {
  RenderOptions o;
  o.live = true;
  o.color = color;
  o.own_client = "me";
  return o;
}

TEST(RendererTest, PlainOutputStreamsTextAsItArrives) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  EXPECT_EQ(r.Render(Started(), kT0, st), "");
  EXPECT_EQ(r.Render(Delta("It sa"), kT0, st), "It sa");
  EXPECT_EQ(r.Render(Delta("ys **hi**."), kT0, st), "ys **hi**.");
  // A tool line starts on a line of its own.
  EXPECT_EQ(r.Render(Ready("read_file", R"({"path":"in.txt"})"), kT0, st),
            "\n→ read_file(in.txt)\n");
  EXPECT_TRUE(r.LiveLines(st, kT0, 80).empty());
  EXPECT_FALSE(r.Animating(st));
}

TEST(RendererTest, PlainOutputHasNoEscapesAnywhere) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  std::string all;
  all += r.Render(Started(), kT0, st);
  all += r.Render(Delta("# Head\n**b** `c`\n```py\nx = 1\n```\n"), kT0, st);
  all += r.Render(Ready("bash", R"({"command":"ls"})"), kT0, st);
  all += r.Render(Output("\x1b[31mred\x1b[0m\n"), kT0, st);
  all += r.Render(Result("\x1b[31mred\x1b[0m\nok\n"), kT0, st);
  v1::Event retry;
  retry.mutable_retrying()->set_attempt(1);
  retry.mutable_retrying()->set_max_attempts(4);
  retry.mutable_retrying()->set_delay_ms(1000);
  retry.mutable_retrying()->set_reason("API 429: slow down");
  all += r.Render(retry, kT0, st);
  v1::PendingApproval a;
  a.set_tool("edit_file");
  a.set_summary("src/a.cc");
  a.set_diff("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n");
  a.add_proposed_rules("edit_file(src/a.cc)");
  all += r.ApprovalPrompt(a) + r.ApprovalQuestion(a);
  all += r.Render(Ended(v1::TURN_OUTCOME_ERROR), kT0, st);
  StatusInfo s;
  s.session_id = "abcdef0123456789";
  all += r.StatusLine(s);
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
  EXPECT_NE(all.find("[API 429: slow down | retry 1/4 in 1s]"), std::string::npos);
  EXPECT_NE(all.find("**b** `c`"), std::string::npos);  // the model's text, unchanged
  EXPECT_NE(all.find("-old\n"), std::string::npos);
  EXPECT_NE(all.find("[a]lways: edit_file(src/a.cc)"), std::string::npos);
}

TEST(RendererTest, ToolResultsAreClippedWithACountOfWhatIsHidden) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  std::string out = r.Render(Result(Lines(10)), kT0, st);
  EXPECT_NE(out.find("  line 6\n"), std::string::npos);
  EXPECT_EQ(out.find("line 7"), std::string::npos);
  EXPECT_NE(out.find("… 4 more lines"), std::string::npos);
  EXPECT_EQ(r.Render(Result(Lines(6)), kT0, st).find("more lines"), std::string::npos);
}

v1::Event ReadyId(const std::string& id, const std::string& path) {
  v1::Event e = Ready("read_file", R"({"path":")" + path + R"("})");
  e.mutable_tool_call_ready()->mutable_call()->set_id(id);
  return e;
}
v1::Event ResultId(const std::string& id, const std::string& content) {
  v1::Event e = Result(content);
  e.mutable_tool_result()->set_call_id(id);
  return e;
}

TEST(RendererTest, CallsThatRanAtOnceShowEachResultUnderItsOwnLine) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  std::string out = r.Render(ReadyId("c1", "a.txt"), kT0, st);
  out += r.Render(ReadyId("c2", "b.txt"), kT0, st);
  out += r.Render(ResultId("c1", "from a\n"), kT0, st);
  out += r.Render(ResultId("c2", "from b\n"), kT0, st);
  EXPECT_EQ(out,
            "→ read_file(a.txt)\n→ read_file(b.txt)\n"
            "→ read_file(a.txt)\n  from a\n"
            "→ read_file(b.txt)\n  from b\n");
  // One call at a time: its line is written once.
  std::string one = r.Render(ReadyId("c3", "c.txt"), kT0, st);
  one += r.Render(ResultId("c3", "from c\n"), kT0, st);
  EXPECT_EQ(one, "→ read_file(c.txt)\n  from c\n");
}

TEST(RendererTest, ColourDimsToolOutputAndColoursCalls) {
  Renderer r(Live(true));
  RenderState st = r.NewState();
  std::string call = r.Render(Ready("edit_file", R"({"path":"src/a.cc","old":"x"})"), kT0, st);
  EXPECT_EQ(call, "\x1b[36m→ edit_file(src/a.cc)\x1b[0m\n");
  std::string result = r.Render(Result("done\n"), kT0, st);
  EXPECT_EQ(result, "\x1b[2m  done\n\x1b[0m");
}

TEST(RendererTest, LiveModeKeepsThePartialLineLiveUntilItsNewline) {
  Renderer r(Live(false));
  RenderState st = r.NewState();
  r.Render(Started(), kT0, st);
  EXPECT_EQ(r.Render(Delta("Hello wor"), kT0, st), "");
  std::vector<std::string> live = r.LiveLines(st, kT0, 80);
  ASSERT_EQ(live.size(), 1u);  // streaming: the text, no spinner
  EXPECT_EQ(live[0], "Hello wor");
  EXPECT_EQ(r.Render(Delta("ld\nNext"), kT0, st), "Hello world\n");
  EXPECT_EQ(r.LiveLines(st, kT0, 80)[0], "Next");
  // A tool call commits the open line first.
  EXPECT_EQ(r.Render(Ready("list_dir", "{}"), kT0, st), "Next\n→ list_dir()\n");
}

TEST(RendererTest, LiveModeRendersMarkdownLineByLine) {
  Renderer r(Live(true));
  RenderState st = r.NewState();
  r.Render(Started(), kT0, st);
  std::string out = r.Render(Delta("Use **this**:\n```sh\nls -l # list\n```\n"), kT0, st);
  std::string plain = StripAnsi(out);
  EXPECT_EQ(plain, "Use this:\n╭─ sh\n│ ls -l # list\n╰─\n");
  EXPECT_NE(out.find("\x1b[1mthis"), std::string::npos);
  // The partial line is styled as far as it goes.
  r.Render(Delta("**almost"), kT0, st);
  EXPECT_EQ(StripAnsi(r.LiveLines(st, kT0, 80)[0]), "**almost");
  r.Render(Delta(" there**"), kT0, st);
  EXPECT_EQ(StripAnsi(r.LiveLines(st, kT0, 80)[0]), "almost there");
}

TEST(RendererTest, SpinnerShowsElapsedSecondsWhileWaitingAndWhileAToolRuns) {
  Renderer r(Live(false));
  RenderState st = r.NewState();
  EXPECT_FALSE(r.Animating(st));
  r.Render(Started(), kT0, st);
  EXPECT_TRUE(r.Animating(st));
  std::vector<std::string> live = r.LiveLines(st, kT0 + absl::Milliseconds(3200), 80);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_NE(live[0].find("thinking · 3s"), std::string::npos) << live[0];
  // Text streaming: no spinner.
  r.Render(Delta("x"), kT0, st);
  EXPECT_FALSE(r.Animating(st));
  r.Render(Ready("bash", R"({"command":"make"})"), kT0, st);
  EXPECT_TRUE(r.Animating(st));
  live = r.LiveLines(st, kT0 + absl::Seconds(12), 80);
  EXPECT_NE(live.back().find("running bash · 12s"), std::string::npos) << live.back();
  r.Render(Ended(v1::TURN_OUTCOME_DONE), kT0, st);
  EXPECT_FALSE(r.Animating(st));
  EXPECT_TRUE(r.LiveLines(st, kT0, 80).empty());
}

TEST(RendererTest, NoSpinnerWhenTurnedOffOrNotLive) {
  RenderOptions o = Live(false);
  o.spinner = false;
  Renderer r(o);
  RenderState st = r.NewState();
  r.Render(Started(), kT0, st);
  EXPECT_FALSE(r.Animating(st));
  EXPECT_TRUE(r.LiveLines(st, kT0, 80).empty());
  Renderer p(Plain());
  RenderState pst = p.NewState();
  p.Render(Started(), kT0, st);
  EXPECT_FALSE(p.Animating(pst));
}

TEST(RendererTest, RunningToolOutputShowsItsTailAndTheHiddenCount) {
  Renderer r(Live(false));
  RenderState st = r.NewState();
  r.Render(Ready("bash", R"({"command":"make"})"), kT0, st);
  EXPECT_EQ(r.Render(Output(Lines(9)), kT0, st), "");
  r.Render(Output("partial"), kT0, st);
  std::vector<std::string> live = r.LiveLines(st, kT0, 80);
  // "… N earlier lines", the last complete lines, the open one, the spinner.
  ASSERT_EQ(live.size(), 6u) << absl::StrJoin(live, "|");
  EXPECT_EQ(live[0], "  … 6 earlier lines");
  EXPECT_EQ(live[1], "  line 7");
  EXPECT_EQ(live[3], "  line 9");
  EXPECT_EQ(live[4], "  partial");
  // Each live line is cut to the width, so none wraps.
  r.Render(Output(std::string(300, 'y') + "\n"), kT0, st);
  for (const std::string& l : r.LiveLines(st, kT0, 40)) EXPECT_LE(DisplayWidth(l), 39) << l;
  // The result replaces the tail, clipped.
  std::string out = r.Render(Result(Lines(9)), kT0, st);
  EXPECT_NE(out.find("… 3 more lines"), std::string::npos);
  EXPECT_EQ(r.LiveLines(st, kT0, 80).size(), 1u);  // only the spinner: waiting for the model
}

TEST(RendererTest, ToolOutputCannotSendEscapesToTheTerminal) {
  Renderer r(Live(false));
  RenderState st = r.NewState();
  r.Render(Ready("bash", "{}"), kT0, st);
  r.Render(Output("\x1b[2J\x1b]0;pwned\x07"
                  "clear\x07\n"),
           kT0, st);
  for (const std::string& l : r.LiveLines(st, kT0, 80)) {
    EXPECT_EQ(l.find('\x1b'), std::string::npos);
    EXPECT_EQ(l.find('\x07'), std::string::npos);
  }
  std::string out = r.Render(Result("\x1b[2Jgone\n"), kT0, st);
  EXPECT_EQ(out, "  gone\n");
}

// Control characters no terminal should get: ESC (CSI, OSC), BEL, C1 (U+009B CSI, U+009D OSC).
bool HasControls(const std::string& s, bool allow_sgr) {
  std::string rest = allow_sgr ? StripAnsi(s) : s;
  for (const char* bad : {"\x1b", "\x07", "\r", "\xC2\x9B", "\xC2\x9D"}) {
    if (rest.find(bad) != std::string::npos) return true;
  }
  return false;
}

TEST(RendererTest, ToolOutputCannotSendC1EscapesToTheTerminal) {
  Renderer r(Live(false));
  RenderState st = r.NewState();
  r.Render(Ready("bash", "{}"), kT0, st);
  r.Render(Output("a\xC2\x9B"
                  "2Jb\xC2\x9D"
                  "0;t\x07\n"),
           kT0, st);
  for (const std::string& l : r.LiveLines(st, kT0, 80)) EXPECT_FALSE(HasControls(l, false)) << l;
  EXPECT_EQ(r.Render(Result("\xC2\x9B"
                            "2Jgone\n"),
                     kT0, st),
            "  2Jgone\n");
}

// The model's answer (prompt-injected by a file it read) reaches a terminal without escapes,
// while streaming, once committed, and when a late client renders the transcript; a pipe
// gets it as written.
TEST(RendererTest, ModelTextCannotSendEscapesToTheTerminal) {
  const std::string evil =
      "x\x1b]52;c;cHduZWQ=\x07y\xC2\x9B"
      "31mz\x1b[2J\r\x07";
  for (bool color : {false, true}) {
    Renderer r(Live(color));
    RenderState st = r.NewState();
    r.Render(Started(), kT0, st);
    EXPECT_FALSE(HasControls(r.Render(Delta(evil), kT0, st), color));
    for (const std::string& l : r.LiveLines(st, kT0, 80)) EXPECT_FALSE(HasControls(l, color)) << l;
    std::string committed = r.Render(Delta("\n"), kT0, st);
    EXPECT_FALSE(HasControls(committed, color)) << committed;
    EXPECT_NE(StripAnsi(committed).find("xy31mz"), std::string::npos) << committed;
    v1::Event reasoning;
    reasoning.mutable_reasoning_delta()->set_text(evil + "\n");
    EXPECT_FALSE(HasControls(r.Render(reasoning, kT0, st), color));
    EXPECT_FALSE(
        HasControls(r.Render(Ready("bash", "{\"command\":\"" + evil + "\"}"), kT0, st), color));
    v1::Event snap;
    snap.mutable_snapshot()->set_transcript_json(DumpJson(Json::array(
        {{{"role", "user"}, {"content", evil}}, {{"role", "assistant"}, {"content", evil}}})));
    std::string history = r.Render(snap, kT0, st);
    EXPECT_FALSE(HasControls(history, color)) << history;
    EXPECT_FALSE(HasControls(r.Notice(evil) + r.ErrorLine(evil), color));
  }
  Renderer pipe(Plain());
  RenderState st = pipe.NewState();
  EXPECT_EQ(pipe.Render(Delta(evil), kT0, st), evil);
}

TEST(RendererTest, ApprovalQuestionIsLiveAndTheOutcomeSaysWho) {
  Renderer r(Live(false));
  RenderState st = r.NewState();
  v1::Event req;
  v1::PendingApproval* a = req.mutable_approval_requested()->mutable_approval();
  a->set_call_id("c1");
  a->set_tool("bash");
  a->set_summary("make test");
  a->add_proposed_rules("bash(make test)");
  std::string block = r.Render(req, kT0, st);
  EXPECT_EQ(block, "? bash wants to run: make test\n");
  st.SetApprovalLine(true);
  std::vector<std::string> live = r.LiveLines(st, kT0, 120);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0], "Allow? [y]es / [n]o / [t]ell it instead / [a]lways: bash(make test) ");
  EXPECT_FALSE(r.Animating(st));
  st.SetApprovalLine(false);
  EXPECT_EQ(r.LiveLines(st, kT0, 120)[0], "waiting for another client to answer…");

  v1::Event res;
  res.mutable_approval_resolved()->set_call_id("c1");
  res.mutable_approval_resolved()->set_decision(v1::DECISION_ALLOW_ALWAYS);
  res.mutable_approval_resolved()->set_client_name("agent-7@pts/3");
  res.mutable_approval_resolved()->add_rules("bash(make test)");
  EXPECT_EQ(r.Render(res, kT0, st), "✓ allowed always by agent-7@pts/3: bash(make test)\n");
  EXPECT_FALSE(st.pending_approval().has_value());
  EXPECT_TRUE(r.Animating(st));  // the tool runs now

  v1::ApprovalResolved mine;
  mine.set_decision(v1::DECISION_DENY);
  mine.set_client_name("me");
  EXPECT_EQ(r.ApprovalOutcome(mine), "✗ denied by you\n");
}

TEST(RendererTest, RulesOfAnApprovalAreShownWithEscapesNeverRaw) {
  Renderer r(Live(false));
  v1::PendingApproval a;
  a.set_tool("bash");
  a.add_proposed_rules("bash(ls\x1b]52;c;aGk=\x07)");
  a.add_proposed_rules("bash(cat <<E\nx\nE)");
  EXPECT_EQ(r.ApprovalQuestion(a),
            "Allow? [y]es / [n]o / [t]ell it instead / [a]lways: bash(ls\\x1b]52;c;aGk=\\x07), "
            "bash(cat <<E\\nx\\nE) ");
  v1::ApprovalResolved res;
  res.set_decision(v1::DECISION_ALLOW_ALWAYS);
  res.add_rules(
      "bash(echo \xc2\x9b"
      "2J)");
  EXPECT_EQ(r.ApprovalOutcome(res), "✓ allowed always: bash(echo \\u009b2J)\n");
}

TEST(RendererTest, ApprovalsShowBidiControlsAndEscapesInsteadOfApplyingOrDroppingThem) {
  Renderer r(Plain());
  v1::PendingApproval a;
  a.set_tool("write_file");
  // U+202E would show "txt.exe" reversed; ESC [2J would clear the screen.
  a.set_summary(
      "notes\xE2\x80\xAE"
      "exe.txt\x1b[2J");
  a.set_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-ok\n+rm -rf /\xE2\x81\xA6 # \x1b]0;t\x07\n");
  std::string out = r.ApprovalPrompt(a);
  EXPECT_NE(out.find("notes\\u202eexe.txt\\x1b[2J"), std::string::npos) << out;
  EXPECT_NE(out.find("+rm -rf /\\u2066 # \\x1b]0;t\\x07"), std::string::npos) << out;
  EXPECT_EQ(out.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
}

// An escalation is not one more question: it says the command leaves the sandbox, shows the
// model's reason escaped like any model text, and is coloured apart.
TEST(RendererTest, AnEscalationLooksApartAndShowsItsReasonEscaped) {
  Renderer plain(Plain());
  v1::PendingApproval a;
  a.set_tool("bash");
  a.set_summary("npm install -g pnpm");
  a.set_requires_person(true);
  a.set_escalation(true);
  a.set_justification("needs the global prefix\x1b[2J\xE2\x80\xAE");
  std::string out = plain.ApprovalPrompt(a);
  EXPECT_NE(out.find("! OUTSIDE THE SANDBOX  bash wants to run, with all your access (files, "
                     "network, secrets): npm install -g pnpm"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("its reason: needs the global prefix\\x1b[2J\\u202e"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("wants to run: "), std::string::npos);  // not the ordinary question
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  std::string coloured = Renderer(Live(true)).ApprovalPrompt(a);
  EXPECT_NE(coloured.find("\x1b[1;41;97m"), std::string::npos) << coloured;
  // Another call only a person may allow says why, under the ordinary question.
  v1::PendingApproval w;
  w.set_tool("write_file");
  w.set_summary(".git/hooks/pre-commit");
  w.set_requires_person(true);
  w.set_person_reason("writing .git/hooks/pre-commit needs a person's approval");
  out = plain.ApprovalPrompt(w);
  EXPECT_NE(out.find("? write_file wants to change: .git/hooks/pre-commit\n  only a person may "
                     "allow this: writing .git/hooks/pre-commit needs a person's approval"),
            std::string::npos)
      << out;
}

TEST(RendererTest, ApprovalDiffIsColoured) {
  Renderer r(Live(true));
  RenderState st = r.NewState();
  v1::PendingApproval a;
  a.set_tool("edit_file");
  a.set_summary("a.txt");
  a.set_diff("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n");
  std::string out = r.ApprovalPrompt(a);
  EXPECT_NE(out.find("\x1b[31m-old\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[32m+new\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[36m@@ -1 +1 @@\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[1m--- a/a.txt"), std::string::npos);
}

TEST(RendererTest, SnapshotRendersTheHistory) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  v1::Event e;
  e.mutable_snapshot()->set_transcript_json(R"([
    {"role":"system","content":"sys"},
    {"role":"user","content":"read it"},
    {"role":"assistant","content":"Reading.","tool_calls":[{"id":"c","type":"function",
      "function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}]},
    {"role":"tool","tool_call_id":"c","content":"alpha"},
    {"role":"assistant","content":"It says alpha."}])");
  e.mutable_snapshot()->set_state(v1::SESSION_STATE_IDLE);
  EXPECT_EQ(r.Render(e, kT0, st),
            "› read it\nReading.\n→ read_file(a.txt)\n  alpha\nIt says alpha.\n");
  EXPECT_FALSE(st.TurnRunning());
}

TEST(RendererTest, StatusLineNamesSessionModelTokensAndClients) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  StatusInfo s;
  s.session_id = "0123456789abcdef";
  s.model = "gpt-4.1";
  s.prompt_tokens = 12345;
  s.completion_tokens = 678;
  s.clients = {"me", "agent-9@pts/4"};
  s.own_client = "me";
  EXPECT_EQ(
      r.StatusLine(s),
      "── 01234567 · gpt-4.1 · 12k in / 678 out tokens · 2 clients (you, agent-9@pts/4) ──\n");
  // The mode and the sandbox, in a word each.
  s.clients.clear();
  s.prompt_tokens = -1;
  s.mode = "auto";
  for (const auto& [sandbox, word] :
       {std::pair{"workspace-write, network off", "sandbox workspace-write"},
        std::pair{"unavailable: bwrap is not installed. Fix: apt install bubblewrap",
                  "sandbox unavailable"},
        std::pair{"off (commands are not confined; …)", "sandbox off"}}) {
    s.sandbox = sandbox;
    EXPECT_EQ(r.StatusLine(s), absl::StrCat("── 01234567 · gpt-4.1 · mode auto · ", word, " ──\n"));
  }
}

TEST(RendererTest, FitToColumnsCutsByColumnsAndKeepsEscapesWhole) {
  EXPECT_EQ(FitToColumns("short", 10), "short");
  EXPECT_EQ(FitToColumns("0123456789abc", 10), "012345678…");
  EXPECT_EQ(FitToColumns("日本語テキスト", 7), "日本語…");
  std::string cut = FitToColumns("\x1b[2mdim text that is long\x1b[0m", 8);
  EXPECT_EQ(StripAnsi(cut), "dim tex…");
  EXPECT_EQ(cut.substr(0, 4), "\x1b[2m");
  EXPECT_EQ(cut.substr(cut.size() - 4), "\x1b[0m");
}

TEST(RendererTest, ArgsSummaryPrefersCommandOrPath) {
  EXPECT_EQ(ArgsSummary("bash", R"({"command":"make\ntest"})"), "make test");
  EXPECT_EQ(ArgsSummary("search", R"({"pattern":"TODO","path":"src"})"), "src");
  EXPECT_EQ(ArgsSummary("list_dir", "{}"), "");
  EXPECT_EQ(ArgsSummary("x", "not json"), "not json");
}

TEST(RendererTest, AnEditThatRanWithoutAskingShowsItsCountsAndFirstHunk) {
  Renderer r(Plain());
  RenderState st = r.NewState();
  v1::Event e = Result("Edited a.txt (1 replacement)");
  std::string diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n x\n-old\n+new\n";
  for (int i = 0; i < 20; ++i) diff += "+more\n";
  diff += "@@ -40,1 +60,1 @@\n-late\n+LATE\n";
  e.mutable_tool_result()->set_diff(diff);
  std::string out = r.Render(e, kT0, st);
  EXPECT_NE(out.find("  a.txt +22 -2\n    @@ -1,2 +1,2 @@\n     x\n    -old\n    +new\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("LATE"), std::string::npos);  // the first hunk only
  EXPECT_NE(out.find("… 12 more lines"), std::string::npos) << out;
  EXPECT_NE(out.find("… 1 more hunk\n"), std::string::npos) << out;
  // No diff (a person approved it and saw it already, or it was not an edit): nothing more.
  EXPECT_EQ(r.Render(Result("ok"), kT0, st), "  ok\n");
}

}  // namespace
}  // namespace agent::client
