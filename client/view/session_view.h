// SessionView: one attached session on this terminal, driven by a single poll loop over the
// terminal, the event mailbox and the signal pipe (so a key reader waiting for y/n/a also
// wakes up when another client answers). It renders events, forwards prompts, approvals
// and cancels, and decides nothing about agent behaviour.
//
// States of the loop (interactive):
//   editing    the line editor is drawn under the live lines; keys go to libedit. A turn
//              may be running: a line typed then steers it (Enter) or is queued (Alt-Enter).
//   approving  an approval waits and this client may answer: the question replaces the
//              editor (whose text is kept); keys y / n / a answer, n, q and Esc deny,
//              Ctrl-D detaches (the approval stays pending for another client), Ctrl-C
//              cancels the turn. ApprovalResolved, from us or from anyone, ends it.
//   watching   read-only observer: no editor; Ctrl-D, Ctrl-C or q leave.
//   restarting the daemon went away (a crash, a kill): "daemon restarting…", the editor
//              keeps what is typed, and the view reconnects to the same socket (every
//              kReconnectStep, growing to 1 s), starting a daemon when none answers as the
//              first `agent` does, and attaches again, whose snapshot is of the new epoch. If
//              that fails for kReconnectFor (30 s) it leaves with the reason and how to come
//              back. A daemon stopped with `agent daemon stop` is not restarted: the view
//              leaves at once.
//              Over ssh (remote.h) a lost link is this state too: "connection lost,
//              reconnecting…", a new ssh per try (no prompts, up to 5 s apart, for 5 min),
//              and the attach asks for the events after the last one seen, so the screen
//              goes on with exactly what was missed; Ctrl-C stops trying.
// One-shot runs the same loop without an editor and returns when its own turn ends; a lost
// daemon ends it with the error code (its turn is lost). When its stdout is not a terminal
// (and not --json) stdout is the answer only (answer_filter.h); the trace (tool calls, their
// output, approvals, retries, the plan) goes to stderr.
//
// Without a terminal on stdin there is no editor: nothing read there is a prompt (stdin for
// a prompt is the one-shot's, main.cc), and its end detaches.
//
// Parts: session_view.cc has the loop and the screen (live area, editor); session_input.cc the
// keys, lines and signals; session_link.cc attaching, a lost stream and reconnecting;
// session_events.cc what each event does to the screen and to the TurnState (turn_state.h);
// the daemon calls and slash commands are a CommandRunner's (command_runner.h); the text
// comes from a pure Renderer with the RenderState kept here.
//
// Keys: Ctrl-C cancels a running turn (Cancel RPC) and stays; at an empty idle prompt it only
// says "Ctrl-C again to leave, Ctrl-D to detach", and a second one within a second leaves.
// Ctrl-D at an empty prompt detaches, and while a reply streams too: the screen keeps what
// was shown. Leaving never stops the session: it goes on in the daemon.
// Signals: SIGHUP and SIGTERM detach an interactive view; a one-shot cancels its turn as
// Ctrl-C does and exits 128+signal once the turn ended (or kSignalGrace later).
// Reattaching from the same terminal draws "— while you were away —" before what was missed
// (seen_mark.h keeps how far this terminal had followed the session).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/v1/agent.grpc.pb.h"
#include "client/commands/session_calls.h"
#include "client/input/line_editor.h"
#include "client/input/slash_commands.h"
#include "client/link/connection.h"
#include "client/link/event_stream.h"
#include "client/terminal/terminal_text.h"
#include "client/terminal/tty.h"
#include "client/text/deny_message.h"
#include "client/text/json_events.h"
#include "client/view/answer_filter.h"
#include "client/view/attention.h"
#include "client/view/checkpoint_dialog.h"
#include "client/view/command_runner.h"
#include "client/view/renderer.h"
#include "client/view/seen_mark.h"
#include "client/view/trust_dialog.h"
#include "client/view/turn_state.h"

namespace agent::client {

class SessionView {
 public:
  SessionView(const Connection& daemon, const ClientOptions& options);
  ~SessionView();
  SessionView(const SessionView&) = delete;
  SessionView& operator=(const SessionView&) = delete;

  // Sends `prompt` to `session_id`, follows that turn and returns its exit code. With
  // `ask`, approvals are asked on the terminal; otherwise answered by --yes or denied.
  int OneShot(const std::string& session_id, const std::string& prompt, bool ask);
  // The interactive loop until the user detaches; returns the exit code.
  int Interactive(const std::string& session_id);

 private:
  // ---- session_view.cc: loop, keys, signals, screen ----
  void Start(bool interactive);
  // Attaches (again) to `id`: a new stream whose first event is the snapshot.
  // With `resume`, asks for the events after the last seen one (a reconnect over ssh).
  void AttachTo(const std::string& id, bool show_history, bool resume = false);
  bool WaitForSnapshot();
  // The stream of the attached session ended with `status` (not after a removal).
  void StreamLost(const grpc::Status& status);
  // Restarting: one try to connect to a daemon again and attach.
  void TryReconnect();
  void Reattached(const agent::v1::Event& first);
  // "agent [--host HOST] attach <id>": how to come back.
  std::string AttachCommand() const;
  std::string SeenPath() const;
  void SaveSeen();
  void StartEditor();
  int Loop();
  void ReadInput();
  void HandleInput(const std::string& bytes);
  void HandleSignal(int sig);
  void HandleInterrupt();
  void HandleQuestionKey(char c);
  void HandleApprovalKeys(const std::string& bytes);
  // `queue`: typed with Alt-Enter, the line waits for the running turn to end instead of
  // steering it.
  void HandleLine(const std::string& line, bool queue = false);
  void RunCommand(const SlashCommand& c);
  void Answer(char key, const std::string& reason = "");
  // Keys while the person types what the model should do instead of the denied call.
  void HandleDenyMessageKeys(const std::string& bytes);
  void CancelTurn();
  // With `steer`, to the running turn; `*steered` says whether it went there.
  bool SendPrompt(const std::string& text, bool steer = false, bool* steered = nullptr);
  void Leave(const std::string& why);
  void Detach();

  // Committed text to write at the next Paint.
  void Emit(const std::string& text) { output_ += text; }
  // A notice for the person (an attach, a mode change, the daemon's notices, a steer): held
  // while a question is shown here, so nothing lands between the question and its answer line,
  // and shown once it is answered (FlushHeldNotices).
  void EmitNotice(const std::string& rendered);
  void FlushHeldNotices();
  // Text about the turn rather than the answer: committed like Emit, except in a one-shot
  // whose stdout is not a terminal, where it goes to stderr (after stdout's text so far).
  void Trace(const std::string& text);
  // Writes committed text and redraws the live area (and the editor) in one write.
  void Paint(bool force = false);
  void WriteOut(const std::string& s);
  std::string HeaderLine() const;
  bool Asking() const;
  bool EditorShown() const;
  int PollTimeoutMs() const;

  // ---- session_events.cc: what each event does ----
  void HandleItem(Mailbox::Item& item);
  void HandleEvent(const agent::v1::Event& e);
  void OnSnapshot(const agent::v1::Event& e, absl::Time now);
  void OnUserMessage(const agent::v1::Event& e, absl::Time now);
  void OnSteered(const agent::v1::Steered& s);
  void OnApprovalRequested(const agent::v1::Event& e, absl::Time now);
  void OnApprovalResolved(const agent::v1::Event& e, absl::Time now);
  void OnClientsChanged(const agent::v1::ClientsChanged& c);
  void OnTurnEnded(const agent::v1::Event& e, absl::Time now);
  void OnOwnTurnEnded(const agent::v1::TurnEnded& t);
  void OnToolResult(const agent::v1::Event& e, absl::Time now);
  void OnSessionRemoved(const agent::v1::SessionRemoved& r);
  void OnError(const agent::v1::Event& e, absl::Time now);
  // The snapshot's history (huge prompts cut as echoed) with the "while you were away" rule
  // where this terminal left.
  std::string HistoryWithAwayRule(const agent::v1::Event& e, absl::Time now);
  // Counts the transcript's messages as events add them (for the seen mark).
  void CountMessages(const agent::v1::Event& e);
  void WarnIfWide();

  grpc::ChannelInterface* channel_;
  agent::v1::AgentDaemon::Stub* stub_;  // of channel_, for Tab completion's ListCommands
  Connection reconnected_;  // the connection made after a daemon restart, once there is one
  ClientOptions o_;
  bool interactive_ = false;
  bool live_ = false;           // stdout is a terminal and not --json: live area, spinner
  bool ask_ = false;            // approvals are asked here
  bool answer_only_ = false;    // one-shot, stdout not a terminal, no --json: stdout is the answer
  Attention attention_{false};  // bell and desktop notification when not focused
  AnswerFilter answer_;         // with answer_only_: holds each reply's text until it is known
  Mailbox mailbox_;             // before the stream and the commands, which post to it
  std::unique_ptr<CommandRunner> commands_;  // remade on a new connection
  CheckpointDialog checkpoints_;             // /undo, /rewind, /diff and their questions
  TrustDialog trust_;                        // /trust and its question
  std::unique_ptr<EventStream> stream_;
  int stream_id_ = 0;
  bool show_history_ = true;
  bool got_snapshot_ = false;
  bool switched_ = false;  // past the first session's snapshot
  TurnState turn_;

  std::unique_ptr<Renderer> renderer_;
  RenderState screen_;  // what the events built up; changed only by renderer_->Render
  std::unique_ptr<LineEditor> editor_;
  LiveArea live_area_;
  std::vector<std::string> last_lines_;
  std::string output_;

  int exit_code_ = 0;

  int unasked_denials_ = 0;  // calls this client denied because nobody could be asked
  bool done_ = false;
  int interrupts_ = 0;                            // one-shot: the second Ctrl-C leaves
  int signal_exit_ = 0;                           // one-shot: 128+signal after SIGTERM/SIGHUP
  absl::Time leave_by_ = absl::InfiniteFuture();  // one-shot: a signal's grace ends
  // One-shot: a signal came before this client saw its turn start (its events lag behind the
  // daemon on a busy machine): the turn is cancelled as soon as it shows.
  bool cancel_on_start_ = false;
  absl::Time last_interrupt_ = absl::InfinitePast();
  absl::Time hint_until_ = absl::InfinitePast();
  std::string hint_;
  bool input_ended_ = false;

  // Restarting (the daemon went away): when to try next and when to give up.
  bool restarting_ = false;
  absl::Time reconnect_at_ = absl::InfiniteFuture();
  absl::Time reconnect_until_ = absl::InfiniteFuture();
  absl::Duration reconnect_step_;
  std::string reconnect_error_;  // why the last try failed, said when the view gives up
  bool removed_ = false;         // SessionRemoved: the session is gone

  // How far this view followed the session (seen_mark.h).
  std::string epoch_;
  uint64_t last_seq_ = 0;
  int64_t messages_ = 0;

  // One-shot: what the result line and the exit code need.
  std::string final_text_;
  std::string call_summary_;  // the gated call last ready, for a denial's line
  std::unique_ptr<CbreakMode> cbreak_;
  DenyMessageInput deny_message_;  // `t` at a question: "no, and tell it…"
  std::string held_notices_;       // EmitNotice's, while a question is shown
};

}  // namespace agent::client
