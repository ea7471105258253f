// Renderer: events -> terminal text. Pure: it keeps nothing between calls; what the events
// build up (the phase of the turn, the streamed line still open, the tail of a running
// tool's output, the pending approval) is a RenderState that the caller owns and passes in,
// and the time is passed in too, so it is tested without a terminal. A RenderState belongs
// to one output stream; neither is thread-safe.
//
// Two ways to write:
//   - committed text, which scrolls up like any program's output;
//   - in live mode (stdout is a terminal), live lines kept under it and redrawn in place:
//     the line of streamed text not yet complete, the last lines of a running tool's output,
//     the spinner. A streamed line moves from the live lines to the committed text when its
//     newline arrives, so nothing above the live area is ever redrawn.
// Outside live mode (a pipe, a file) text is written as it arrives and nothing is live.
// Colour only with `color` (a terminal, no NO_COLOR, no --plain); Markdown structure (fences,
// bullets, tables, no ** markers) in live mode, coloured or plain; outside it the text is
// exactly what the model wrote. Prose is wrapped at word boundaries to `columns()`.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/v1/agent.pb.h"
#include "client/text/child_view.h"
#include "client/text/history.h"
#include "client/text/markdown.h"
#include "common/json.h"

namespace agent::client {

struct RenderOptions {
  bool color = false;
  bool live = false;
  bool spinner = true;           // in live mode: show the spinner while waiting
  bool echo_prompts = false;     // render UserMessage events (interactive: other clients' prompts)
  int tool_output_lines = 6;     // lines of a tool result shown before "… N more lines"
  int live_output_lines = 4;     // lines of a running tool's output shown while it runs
  std::string own_client;        // our client name: answers by it read "by you"
  std::function<int()> columns;  // the terminal's width now; unset: no wrapping
};

// What the status line shows.
struct StatusInfo {
  std::string session_id;
  std::string model;
  int64_t prompt_tokens = -1;  // of the last request; -1: none yet
  int64_t completion_tokens = 0;
  std::vector<std::string> clients;
  std::string own_client;
  bool read_only = false;
  std::string mode;     // the session's policy mode (client/text/policy_mode.h); empty: not shown
  std::string sandbox;  // Session.sandbox; empty: not shown
};

// What the events of a session have built up on the screen so far. Owned by the caller,
// changed only through Renderer::Render (and PromptSent / SetApprovalLine).
class RenderState {
 public:
  explicit RenderState(MarkdownMode mode = MarkdownMode::kRaw) : markdown_(mode) {}

  // A turn is running as far as the events tell.
  bool TurnRunning() const { return phase_ != Phase::kIdle; }
  // The UI sent a prompt: show the spinner before the daemon's TurnStarted arrives.
  void PromptSent(absl::Time now);
  // The pending approval shown in the live lines: with `can_answer` the question, else a
  // note that another client must answer. Cleared by ApprovalResolved or TurnEnded.
  void SetApprovalLine(bool can_answer) { can_answer_ = can_answer; }
  const std::optional<agent::v1::PendingApproval>& pending_approval() const {
    return pending_approval_;
  }
  // Ctrl-O: the running children's lines (child_view.h) also show their current tool in full
  // and the last line each wrote.
  void ToggleChildDetail() { child_detail_ = !child_detail_; }
  bool child_detail() const { return child_detail_; }

 private:
  friend class Renderer;
  enum class Phase { kIdle, kThinking, kStreaming, kPreparing, kTool, kApproval };
  enum class TextKind { kAnswer, kReasoning };
  void SetPhase(Phase p, absl::Time now, std::string what = "");

  MarkdownStyler markdown_;
  // Outside live mode: the last text written did not end with a newline.
  bool mid_line_ = false;
  bool in_reasoning_ = false;
  // Live mode: the streamed line not yet complete, and what kind of text it is.
  std::string partial_;
  TextKind partial_kind_ = TextKind::kAnswer;
  // Live mode: the tail of the running tool's output.
  std::vector<std::string> tool_tail_;
  std::string tool_tail_open_;  // its incomplete last line
  int tool_lines_seen_ = 0;
  // Calls ready and not yet answered (id -> their "→ name(args)" line), and the call whose
  // line was written last: a result under another call's line (calls that ran at once) is
  // written under its own line again. Cleared at each turn's end.
  std::map<std::string, std::string> ready_calls_;
  std::string last_call_shown_;

  Phase phase_ = Phase::kIdle;
  absl::Time phase_since_ = absl::InfinitePast();
  std::string phase_what_;  // the tool name
  std::optional<agent::v1::PendingApproval> pending_approval_;
  bool can_answer_ = false;
  // Children's approvals asked while another is shown: each is shown when the one before is
  // resolved (several children may wait at once). Bounded like the children.
  std::deque<agent::v1::PendingApproval> queued_approvals_;
  ChildBoard children_;  // the `task` tool's children running in this turn
  bool child_detail_ = false;
};

class Renderer {
 public:
  explicit Renderer(RenderOptions options);

  // A fresh state for this renderer's output (live and colour decide the Markdown styling).
  RenderState NewState() const { return RenderState(Mode()); }

  // The committed text for `event`; updates `state`.
  std::string Render(const agent::v1::Event& event, absl::Time now, RenderState& state) const;
  // The live lines now, each cut to `cols` columns (empty outside live mode).
  std::vector<std::string> LiveLines(const RenderState& state, absl::Time now, int cols) const;
  // True while the live lines change with time alone (the spinner turns).
  bool Animating(const RenderState& state) const;

  // The history of a snapshot's transcript, as it would have streamed.
  std::string RenderTranscript(const std::vector<HistoryMessage>& messages,
                               RenderState& state) const;
  // `→ name(args)`: the one-line form of a tool call.
  std::string CallLine(const std::string& name, const std::string& arguments) const;
  // What is asked: the tool and command or path, and the coloured diff of an edit.
  std::string ApprovalPrompt(const agent::v1::PendingApproval& approval) const;
  // How the model's question (PendingApproval.question) was answered, and by whom.
  std::string QuestionOutcome(const agent::v1::ApprovalResolved& resolved) const;
  // A tool's whole output (/last): every line, controls shown, none clipped.
  std::string WholeOutput(const std::string& name, const std::string& text) const;
  // An edit that ran without asking (ToolResult.diff): "path +A -R" and its first hunk.
  std::string EditSummary(const std::string& diff) const;
  // The question line: "[y]es / [n]o / [a]lways (rule)".
  std::string ApprovalQuestion(const agent::v1::PendingApproval& approval) const;
  // Who answered and how.
  std::string ApprovalOutcome(const agent::v1::ApprovalResolved& resolved) const;
  // A prompt as typed ("› text"), with the sender when it was another client.
  std::string UserLine(const std::string& text, const std::string& from) const;
  std::string Notice(const std::string& text) const;  // a dim line
  std::string ErrorLine(const std::string& text) const;
  std::string StatusLine(const StatusInfo& status) const;
  // Ends a line of streamed text if one is open (committing it in live mode).
  std::string EndLine(RenderState& state) const;

  std::string Dim(const std::string& s) const;
  std::string Colored(const char* code, const std::string& s) const;

 private:
  using Phase = RenderState::Phase;
  using TextKind = RenderState::TextKind;

  std::string ForTerminal(const std::string& s) const;
  MarkdownMode Mode() const;
  int WrapColumns() const;
  std::string Clipped(const std::string& text) const;
  std::string DiffLine(const std::string& line) const;
  std::string Text(const std::string& text, TextKind kind, RenderState& state) const;
  std::string StyleLine(const std::string& line, TextKind kind, RenderState& state) const;
  std::string Markdown(const std::string& text) const;
  std::string Snapshot(const agent::v1::Snapshot& s, absl::Time now, RenderState& state) const;
  std::string ToolResult(const agent::v1::ToolResult& r, absl::Time now, RenderState& state) const;
  std::string ToolOutput(const std::string& chunk, RenderState& state) const;
  std::string ApprovalRequested(const agent::v1::PendingApproval& a, absl::Time now,
                                RenderState& state) const;
  std::string ApprovalResolved(const agent::v1::ApprovalResolved& r, absl::Time now,
                               RenderState& state) const;
  std::string ChildProgress(const agent::v1::ChildProgress& p, absl::Time now,
                            RenderState& state) const;
  std::string TurnEnded(const agent::v1::TurnEnded& t, absl::Time now, RenderState& state) const;

  const RenderOptions options_;
};

// Short display form of a call's arguments: the path or command when there is one.
std::string ArgsSummary(const std::string& name, const std::string& arguments);

// `s` cut to `cols` display columns, with "…" when cut; escapes are kept whole.
std::string FitToColumns(const std::string& s, int cols);

}  // namespace agent::client
