#include "client/view/session_view.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/input/completion_sources.h"
#include "client/input/remote_completion.h"
#include "client/input/slash_commands.h"
#include "client/link/remote.h"
#include "client/terminal/tty.h"
#include "client/text/session_table.h"
#include "client/view/prompt_echo.h"
#include "common/config.h"
#include "common/paths.h"
#include "common/protocol.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr absl::Duration kSnapshotTimeout = absl::Seconds(30);
constexpr absl::Duration kDoubleInterrupt = absl::Seconds(1);
constexpr int kSpinnerFrameMs = 100;
constexpr absl::Duration kSignalGrace = absl::Seconds(10);
constexpr absl::Duration kReconnectStep = absl::Milliseconds(100);
constexpr absl::Duration kReconnectMaxStep = absl::Seconds(1);
constexpr absl::Duration kReconnectFor = absl::Seconds(30);
// Over ssh (remote.h) a lost link is a detach: the session runs on while the laptop sleeps or
// the network changes, so the view keeps trying longer, each try bounded.
constexpr absl::Duration kRemoteReconnectFor = absl::Minutes(5);
constexpr absl::Duration kRemoteReconnectMaxStep = absl::Seconds(5);
constexpr absl::Duration kRemoteTryFor = absl::Seconds(15);
constexpr char kChildDetailKey = 0x0f;  // Ctrl-O

// A terminal in raw mode may not turn "\n" into "\r\n" by itself.
std::string Crlf(const std::string& s) {
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out += '\r';
    out += s[i];
  }
  return out;
}

std::string Short(const std::string& id) { return id.substr(0, 8); }

}  // namespace

SessionView::SessionView(const Connection& daemon, const ClientOptions& options)
    : channel_(daemon.channel.get()),
      stub_(daemon.stub.get()),
      o_(options),
      commands_(std::make_unique<CommandRunner>(*daemon.stub, o_, mailbox_)) {}

SessionView::~SessionView() {
  stream_.reset();
  editor_.reset();
  cbreak_.reset();
  std::fflush(stdout);
}

void SessionView::Trace(const std::string& text) {
  if (!answer_only_) {
    Emit(text);
  } else if (!text.empty()) {
    Paint();
    std::fputs(text.c_str(), stderr);
  }
}

void SessionView::WriteOut(const std::string& s) {
  if (!s.empty()) std::fwrite(s.data(), 1, s.size(), stdout);
}

void SessionView::AttachTo(const std::string& id, bool show_history, bool resume) {
  stream_.reset();
  ++stream_id_;
  got_snapshot_ = false;
  removed_ = false;  // /new after a removal attaches to a live session
  show_history_ = show_history;
  turn_.session_id = id;
  v1::AttachRequest req;
  req.set_session_id(id);
  req.set_client_name(o_.client_name);
  req.set_read_only(o_.read_only);
  req.set_protocol_version(kProtocolVersion);
  if (resume && !epoch_.empty()) {
    // Exactly the missed events when the daemon still has them, else a snapshot.
    req.set_epoch(epoch_);
    req.set_after_seq(last_seq_);
  }
  stream_ = std::make_unique<EventStream>(*channel_, req, mailbox_, stream_id_);
}

bool SessionView::WaitForSnapshot() {
  absl::Time deadline = absl::Now() + kSnapshotTimeout;
  while (!got_snapshot_) {
    std::optional<Mailbox::Item> it = mailbox_.Next(deadline - absl::Now());
    if (!it.has_value()) {
      std::fprintf(stderr, "agent: no answer from agentd\n");
      return false;
    }
    if (it->kind == Mailbox::Item::kEnd && it->stream == stream_id_) {
      std::string msg = it->status.ok() ? "agentd ended the stream" : it->status.error_message();
      std::fprintf(stderr, "agent: %s\n", msg.c_str());
      return false;
    }
    HandleItem(*it);
  }
  return true;
}

void SessionView::StreamLost(const grpc::Status& status) {
  std::string msg = status.ok() ? "agentd ended the stream" : status.error_message();
  const grpc::StatusCode code = status.error_code();
  const bool stopped = code == static_cast<grpc::StatusCode>(kDaemonStoppedCode);
  // Reattaching after a restart, the session can still be locked by the daemon that went away
  // (a SIGTERM'd one seals its turns before it exits): it is ending, so this is tried again.
  const bool old_daemon_ending = restarting_ && code == grpc::StatusCode::FAILED_PRECONDITION;
  const bool daemon_gone = code == grpc::StatusCode::OK || code == grpc::StatusCode::UNAVAILABLE ||
                           code == grpc::StatusCode::CANCELLED || old_daemon_ending;
  if (old_daemon_ending) reconnect_error_ = msg;
  if (!interactive_ || !daemon_gone || stopped) {
    Leave("");
    if (interactive_ && stopped) {
      std::fprintf(stderr, "agent: %s; the session is saved: agent attach %s\n", msg.c_str(),
                   Short(turn_.session_id).c_str());
    } else if (interactive_) {
      std::fprintf(stderr, "agent: lost the session: %s\n", msg.c_str());
    } else {
      std::fprintf(stderr,
                   "agent: lost the daemon (%s); this turn is lost. The session is kept: agent "
                   "attach %s\n",
                   msg.c_str(), Short(turn_.session_id).c_str());
    }
    exit_code_ = kExitError;
    return;
  }
  absl::Time now = absl::Now();
  const bool remote = ActiveRemote() != nullptr;
  if (!restarting_) {
    Emit(renderer_->EndLine(screen_) +
         renderer_->Notice(remote ? "connection lost, reconnecting… (what you type is kept; "
                                    "Ctrl-C stops trying)"
                                  : "daemon restarting… (reconnecting; what you type is kept)"));
  }
  restarting_ = true;
  if (reconnect_until_ == absl::InfiniteFuture()) {
    reconnect_until_ = now + (remote ? kRemoteReconnectFor : kReconnectFor);
    reconnect_step_ = kReconnectStep;
  }
  reconnect_at_ = now + reconnect_step_;
  // Over ssh the same daemon goes on: the screen keeps the turn, the missed events follow.
  if (remote) return;
  // The turn shown running is over for this screen: the new daemon's snapshot says what is.
  v1::Event idle;
  idle.mutable_turn_ended();
  Emit(renderer_->Render(idle, now, screen_));
  turn_.turns_waiting = 0;
  turn_.echoed.clear();
  turn_.answered_call.clear();
}

// Connects to the socket again, starting a daemon when none answers (as the first `agent`
// does, under the same lock, so clients reconnecting at once start one) and attaches; the
// snapshot of the new epoch, or another end, says how it went. A daemon stopped on purpose
// (`agent daemon stop`) never gets here: its clients leave (StreamLost).
void SessionView::TryReconnect() {
  absl::Time now = absl::Now();
  reconnect_at_ = absl::InfiniteFuture();
  const RemoteTarget* remote = ActiveRemote();
  if (now > reconnect_until_) {
    restarting_ = false;
    exit_code_ = kExitError;
    Leave(renderer_->ErrorLine(
        remote != nullptr
            ? absl::StrCat("could not reconnect to ", remote->host, " within ",
                           absl::FormatDuration(kRemoteReconnectFor),
                           "; the session goes on there: ", AttachCommand())
            : absl::StrCat("agentd did not come back within ", absl::FormatDuration(kReconnectFor),
                           reconnect_error_.empty() ? "" : " (" + reconnect_error_ + ")",
                           "; the session is saved: agent attach ", Short(turn_.session_id))));
    return;
  }
  reconnect_step_ = std::min(reconnect_step_ * 2,
                             remote != nullptr ? kRemoteReconnectMaxStep : kReconnectMaxStep);
  std::string socket = SocketPath();
  absl::StatusOr<Connection> c =
      remote != nullptr ? ConnectRemote(*remote, RemoteConnectOptions{/*autostart=*/false,
                                                                      /*batch=*/true, kRemoteTryFor,
                                                                      SignalPipe::Get().fd()})
                        : Connect(ConnectOptions{socket, /*autostart=*/true});
  if (!c.ok()) {
    reconnect_error_ = std::string(c.status().message());
    // A refused socket check, or no usable agent on HOST: trying again will not change it.
    if (absl::IsPermissionDenied(c.status()) || absl::IsFailedPrecondition(c.status())) {
      restarting_ = false;
      exit_code_ = kExitError;
      Leave(renderer_->ErrorLine(std::string(c.status().message())));
      return;
    }
    reconnect_at_ = now + reconnect_step_;
    return;
  }
  stream_.reset();
  commands_.reset();
  reconnected_ = *std::move(c);
  channel_ = reconnected_.channel.get();
  stub_ = reconnected_.stub.get();
  commands_ = std::make_unique<CommandRunner>(*reconnected_.stub, o_, mailbox_);
  AttachTo(turn_.session_id, /*show_history=*/false, /*resume=*/remote != nullptr);
}

// The first event of the stream attached after a reconnect: the view is back.
void SessionView::Reattached() {
  restarting_ = false;
  reconnect_until_ = absl::InfiniteFuture();
  reconnect_at_ = absl::InfiniteFuture();
  const RemoteTarget* remote = ActiveRemote();
  Emit(renderer_->Notice(remote != nullptr
                             ? absl::StrCat("reconnected to ", remote->host,
                                            ": reattached to session ", Short(turn_.session_id))
                             : "daemon back: reattached to session " + Short(turn_.session_id)));
}

std::string SessionView::AttachCommand() const {
  const RemoteTarget* remote = ActiveRemote();
  return absl::StrCat("agent ", remote != nullptr ? "--host " + remote->host + " " : "", "attach ",
                      Short(turn_.session_id));
}

std::string SessionView::SeenPath() const {
  const char* tty = isatty(0) ? ttyname(0) : nullptr;
  std::string term = tty != nullptr ? tty : "";
  if (term.rfind("/dev/", 0) == 0) term = term.substr(5);
  return SeenMarkPath(StateDir(), turn_.session_id, term);
}

void SessionView::SaveSeen() {
  if (!interactive_ || removed_ || epoch_.empty() || turn_.session_id.empty()) return;
  // Losing a mark only loses the rule on the next attach: not worth an error on screen.
  (void)SaveSeenMark(SeenPath(), SeenMark{epoch_, last_seq_, messages_});
}

bool SessionView::SendPrompt(const std::string& text) {
  if (removed_) {
    Emit(renderer_->ErrorLine(absl::StrCat("session ", Short(turn_.session_id),
                                           " was removed; not sent. /new starts a session, "
                                           "Ctrl-D leaves")));
    return false;
  }
  if (restarting_) {
    Emit(renderer_->ErrorLine(ActiveRemote() != nullptr
                                  ? "not sent: reconnecting; the line is kept"
                                  : "not sent: the daemon is restarting; the line is kept"));
    if (editor_) editor_->SetText(text);
    return false;
  }
  grpc::Status s = commands_->SendPrompt(turn_.session_id, text);
  if (s.ok()) return true;
  if (interactive_) {
    Emit(renderer_->ErrorLine(s.error_message()));
  } else {
    std::fprintf(stderr, "agent: %s\n", s.error_message().c_str());
  }
  return false;
}

void SessionView::CancelTurn() {
  grpc::Status s = commands_->Cancel(turn_.session_id);
  if (!s.ok() && interactive_) Emit(renderer_->ErrorLine(s.error_message()));
}

void SessionView::Answer(char key, const std::string& reason) {
  const auto& pending = screen_.pending_approval();
  if (!pending.has_value() || turn_.answered_call == pending->call_id()) return;
  // A child's call (the `task` tool) is answered on the child; the daemon takes either id.
  const std::string& on =
      pending->child_session_id().empty() ? turn_.session_id : pending->child_session_id();
  // 'e': "always", exactly this command, instead of the prefix rule proposed.
  std::vector<std::string> rules;
  if (key == 'e') rules.assign(pending->exact_rules().begin(), pending->exact_rules().end());
  grpc::Status s = commands_->Approve(on, pending->call_id(),
                                      key == 'y'                 ? v1::DECISION_ALLOW_ONCE
                                      : key == 'a' || key == 'e' ? v1::DECISION_ALLOW_ALWAYS
                                                                 : v1::DECISION_DENY,
                                      reason, /*person=*/true, rules);
  // FAILED_PRECONDITION: another client answered first; its ApprovalResolved is on the way.
  if (s.ok() || s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    turn_.answered_call = pending->call_id();
  } else {
    Emit(renderer_->ErrorLine(s.error_message()));
  }
}

bool SessionView::Asking() const {
  return ask_ && !o_.read_only && screen_.pending_approval().has_value() &&
         turn_.answered_call != screen_.pending_approval()->call_id();
}

bool SessionView::EditorShown() const {
  return editor_ != nullptr && editor_->started() && !done_ &&
         !screen_.pending_approval().has_value();
}

std::string SessionView::HeaderLine() const {
  if (o_.read_only) {
    return renderer_->Notice(absl::StrCat("watching session ", Short(turn_.session_id), " in ",
                                          turn_.workdir, " (read-only) — Ctrl-D or q leaves"));
  }
  std::string header = renderer_->Notice(
      absl::StrCat("session ", Short(turn_.session_id), " in ", turn_.workdir,
                   " — Ctrl-D detaches, Ctrl-C cancels a turn, /help for commands"));
  // From the first screen: what runs without a question, and how it is confined.
  if (!turn_.mode.empty() || !turn_.sandbox.empty()) {
    header += renderer_->Notice(absl::StrCat(
        "mode ", turn_.mode.empty() ? "ask" : turn_.mode, " · sandbox: ",
        turn_.sandbox.empty() ? "(not told by this agentd)" : PrintableLine(turn_.sandbox)));
  }
  return header;
}

void SessionView::Leave(const std::string& message) {
  SaveSeen();
  // The line still streaming stays where it was shown: only the spinner and editor go.
  if (renderer_) output_ = renderer_->EndLine(screen_) + output_;
  if (live_) {
    int cols = TerminalColumns();
    std::string frame =
        live_area_.Erase(cols, live_area_.editor_below() && editor_ ? editor_->CursorRow(cols) : 0);
    live_area_.Reset();
    last_lines_.clear();
    frame += Crlf(output_ + message);
    WriteOut(frame);
  } else {
    WriteOut(output_ + message);
  }
  output_.clear();
  WriteOut(attention_.End());
  std::fflush(stdout);
  if (editor_) editor_->Stop();
  done_ = true;
}

void SessionView::Detach() {
  Leave(renderer_->Notice("detached; the session goes on. Come back with: " + AttachCommand()));
}

void SessionView::Paint(bool force) {
  if (!live_ || done_) {
    // After Leave nothing is live any more: only what is left to say.
    WriteOut(live_ ? Crlf(output_) : output_);
    output_.clear();
    std::fflush(stdout);  // --json lines too: a script reads each event as it comes
    return;
  }
  absl::Time now = absl::Now();
  int cols = TerminalColumns();
  std::vector<std::string> lines = renderer_->LiveLines(screen_, now, cols);
  // `t` at the question: the message being typed stands where the question was (its last line).
  if (deny_message_.active() && !lines.empty()) lines.back() = deny_message_.Line(cols);
  if (!hint_.empty()) {
    if (now < hint_until_) {
      lines.push_back(renderer_->Dim(hint_));
    } else {
      hint_.clear();
    }
  }
  bool editor = EditorShown();
  bool editor_was = live_area_.editor_below();
  if (!force && output_.empty() && lines == last_lines_ && editor == editor_was) return;
  std::string frame = live_area_.Erase(cols, editor_was && editor_ ? editor_->CursorRow(cols) : 0);
  frame += Crlf(output_);
  output_.clear();
  frame += live_area_.Draw(lines, editor, cols);
  WriteOut(frame);
  // libedit writes to the same stdout buffer and flushes it: the frame leaves in one write.
  if (editor) editor_->Redraw();
  std::fflush(stdout);
  last_lines_ = std::move(lines);
}

int SessionView::PollTimeoutMs() const {
  int64_t t = -1;
  if (live_ && renderer_->Animating(screen_)) t = kSpinnerFrameMs;
  for (absl::Time at : {reconnect_at_, leave_by_}) {
    if (at == absl::InfiniteFuture()) continue;
    int64_t left = std::max<int64_t>(1, absl::ToInt64Milliseconds(at - absl::Now()) + 1);
    t = t < 0 ? left : std::min(t, left);
  }
  if (!hint_.empty()) {
    int64_t left = absl::ToInt64Milliseconds(hint_until_ - absl::Now()) + 1;
    left = std::max<int64_t>(left, 1);
    t = t < 0 ? left : std::min(t, left);
  }
  return static_cast<int>(t);
}

void SessionView::HandleInterrupt() {
  absl::Time now = absl::Now();
  if (!interactive_) {
    if (++interrupts_ >= 2) {
      exit_code_ = kExitCancelled;
      Leave("");
      return;
    }
    CancelTurn();
    return;
  }
  if (restarting_ && ActiveRemote() != nullptr) {
    Leave(renderer_->Notice("stopped reconnecting; the session goes on. Come back with: " +
                            AttachCommand()));
    return;
  }
  if (o_.read_only) {
    Leave(renderer_->Notice("left; the session goes on."));
    return;
  }
  if (screen_.TurnRunning() || turn_.turns_waiting > 0 || screen_.pending_approval()) {
    CancelTurn();
    return;
  }
  if (editor_ && !editor_->Text().empty()) {
    // Erase with the cursor where libedit left it, then redraw the emptied line.
    int cols = TerminalColumns();
    WriteOut(live_area_.Erase(cols, live_area_.editor_below() ? editor_->CursorRow(cols) : 0));
    live_area_.Reset();
    editor_->Clear();
    Paint(true);
    return;
  }
  if (now - last_interrupt_ < kDoubleInterrupt) {
    Detach();
    return;
  }
  last_interrupt_ = now;
  hint_ = "Ctrl-C again to leave, Ctrl-D to detach";
  hint_until_ = now + kDoubleInterrupt;
}

void SessionView::HandleSignal(int sig) {
  switch (sig) {
    case SIGINT:
      HandleInterrupt();
      return;
    case SIGWINCH:
      if (editor_) editor_->Resized();
      Paint(true);
      return;
    case SIGCONT:
      // Back from Ctrl-Z: the shell used the screen; start the live area afresh.
      live_area_.Reset();
      last_lines_.clear();
      if (editor_ && editor_->started()) {
        editor_->Stop();
        WriteOut("\r\n");
        editor_->Start();
        live_area_.Draw({}, true, TerminalColumns());
      }
      Paint(true);
      return;
    case SIGTERM:
    case SIGHUP:
      if (interactive_) {
        Detach();  // like tmux: a closed terminal or a `kill` leaves the session running
        return;
      }
      // One-shot: the turn is cancelled as by Ctrl-C; a second signal does not wait for it.
      if (signal_exit_ != 0 || !screen_.TurnRunning()) {
        exit_code_ = 128 + sig;
        Leave("");
        return;
      }
      signal_exit_ = 128 + sig;
      leave_by_ = absl::Now() + kSignalGrace;
      CancelTurn();
      return;
    default:
      return;
  }
}

// After `t`: the message is typed on the question's line; Enter denies with it (the model is
// told the person's words), Esc goes back to the question.
void SessionView::HandleDenyMessageKeys(const std::string& bytes) {
  switch (deny_message_.Feed(bytes)) {
    case DenyMessageInput::Outcome::kSend: {
      const std::string reason = deny_message_.text();
      deny_message_.Stop();
      Answer('n', reason);
      break;
    }
    case DenyMessageInput::Outcome::kBack:
    case DenyMessageInput::Outcome::kTyping:
      break;
  }
  Paint(true);
}

// At an approval question: y / n / a answer (e: "always" for exactly this command when the
// proposal is a prefix rule); t denies with a message typed next; q and a lone
// Esc deny (as n: Claude Code's Esc refuses too); Ctrl-D detaches and leaves the approval to
// another client.
void SessionView::HandleApprovalKeys(const std::string& bytes) {
  if (deny_message_.active()) {
    HandleDenyMessageKeys(bytes);
    return;
  }
  if (bytes == "\x1b") {
    Answer('n');
    return;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (c == 0x1b) return;  // an escape sequence (an arrow key): not an answer
    if (c == 0x04) {
      if (interactive_) {
        Detach();
      } else {
        Leave(
            renderer_->Notice(absl::StrCat("left; the approval waits for another client: agent "
                                           "attach ",
                                           Short(turn_.session_id))));
      }
      return;
    }
    char k = static_cast<char>(c | 0x20);
    if (k == 'y' || k == 'n' || k == 'a' || k == 'q') {
      Answer(k == 'q' ? 'n' : k);
      return;
    }
    if (k == 'e' && screen_.pending_approval().has_value() &&
        screen_.pending_approval()->exact_rules_size() > 0) {
      Answer('e');
      return;
    }
    if (k == 't') {
      deny_message_.Start();
      if (!live_) Emit(renderer_->Notice("tell it instead (Enter sends, Esc goes back):"));
      Paint(true);
      return;
    }
  }
}

void SessionView::HandleInput(const std::string& bytes) {
  std::string keys = bytes;
  if (keys.find(kChildDetailKey) != std::string::npos) {
    // Ctrl-O is ours, never the editor's, even at a question: it shows or hides the
    // children's details.
    keys.erase(std::remove(keys.begin(), keys.end(), kChildDetailKey), keys.end());
    screen_.ToggleChildDetail();
    Paint(true);
    if (keys.empty()) return;
  }
  if (Asking()) {
    HandleApprovalKeys(keys);
    return;
  }
  if (o_.read_only) {
    for (char c : keys) {
      if (c == 0x04 || c == 'q') {
        Leave(renderer_->Notice("left; the session goes on."));
        return;
      }
    }
    return;
  }
  if (screen_.pending_approval().has_value()) return;  // answered; the result is coming
  if (!interactive_ || !editor_) return;               // without an editor, stdin holds no prompts
  hint_.clear();
  for (LineEditor::Result& r : editor_->Feed(keys)) {
    if (done_) return;
    if (r.kind == LineEditor::Result::kEof) {
      Detach();
      return;
    }
    HandleLine(r.text);
  }
}

void SessionView::HandleLine(const std::string& line) {
  if (trust_.Asking()) {  // the line answers /trust's question
    Emit(renderer_->UserLine(EchoedPrompt(line), ""));
    Emit(trust_.Answer(*stub_, line, *renderer_).text);
    Paint(true);
    return;
  }
  if (checkpoints_.Asking()) {  // the line answers /undo's or /rewind's question
    Emit(renderer_->UserLine(EchoedPrompt(line), ""));
    CommandRunner::Outcome out = checkpoints_.Answer(*stub_, line, turn_, *renderer_);
    if (!out.attach_to.empty()) AttachTo(out.attach_to, /*show_history=*/false);
    Emit(out.text);
    Paint(true);
    return;
  }
  if (editor_ && !line.empty() && line.back() == '\\') {
    // Continues on the next line: the editor keeps the text, with a newline.
    editor_->SetText(line.substr(0, line.size() - 1) + "\n");
    Paint(true);
    return;
  }
  if (line.find_first_not_of(" \t\n") == std::string::npos) {
    Paint(true);
    return;
  }
  if (std::optional<SlashCommand> c = ParseSlashCommand(line);
      c.has_value() && !commands_->IsCustom(*c, turn_.workdir)) {
    if (editor_) editor_->AddHistory(line);
    Emit(renderer_->UserLine(EchoedPrompt(line), ""));
    RunCommand(*c);
    Paint(true);
    return;
  }
  std::string text = line[0] == '/' && line.size() > 1 && line[1] == '/' ? line.substr(1) : line;
  if (editor_) editor_->AddHistory(text);
  bool busy = screen_.TurnRunning() || turn_.turns_waiting > 0;
  Emit(renderer_->UserLine(EchoedPrompt(text), ""));
  if (busy) Emit(renderer_->Notice("  (queued: it runs when the current turn ends)"));
  if (SendPrompt(text)) {
    turn_.echoed.push_back({text, busy});
    ++turn_.turns_waiting;
    screen_.PromptSent(absl::Now());
  }
  Paint(true);
}

void SessionView::RunCommand(const SlashCommand& c) {
  CommandRunner::Outcome out =
      TrustDialog::Handles(c) ? trust_.Start(*stub_, turn_.workdir, *renderer_)
      : CheckpointDialog::Handles(c)
          ? checkpoints_.Start(*stub_, c, turn_, *renderer_, o_.color, o_.client_name)
          : commands_->Run(c, turn_, *renderer_);
  if (out.detach) {
    Leave(out.text);
    return;
  }
  if (!out.attach_to.empty()) AttachTo(out.attach_to, /*show_history=*/false);
  Emit(out.text);
}

// What stdin has now; at its end (EOF or an error) an interactive view leaves.
void SessionView::ReadInput() {
  char buf[4096];
  ssize_t got = ::read(0, buf, sizeof buf);
  if (got > 0) {
    std::string keys = attention_.Filter(std::string_view(buf, static_cast<size_t>(got)));
    if (!keys.empty()) HandleInput(keys);
    return;
  }
  if (got < 0 && errno == EINTR) return;
  input_ended_ = true;
  if (interactive_ && !done_) Leave("");
}

int SessionView::Loop() {
  int sig_fd = SignalPipe::Get().fd();
  // Bounded by the user: each turn of the loop waits in poll for input, an event or a tick.
  while (!done_) {
    Paint();
    pollfd fds[3];
    int n = 0;
    fds[n++] = {mailbox_.fd(), POLLIN, 0};
    fds[n++] = {sig_fd, POLLIN, 0};
    bool want_stdin = !input_ended_ &&
                      ((interactive_ && !o_.read_only) || Asking() || (o_.read_only && isatty(0)));
    if (want_stdin) fds[n++] = {0, POLLIN, 0};
    int r = ::poll(fds, static_cast<nfds_t>(n), PollTimeoutMs());
    if (r < 0 && errno != EINTR) break;
    for (int sig : SignalPipe::Get().Drain()) {
      if (!done_) HandleSignal(sig);
    }
    absl::Time now = absl::Now();
    if (!done_ && now >= leave_by_) {
      exit_code_ = signal_exit_;
      Leave("");
    }
    if (!done_ && restarting_ && now >= reconnect_at_) TryReconnect();
    for (Mailbox::Item& it : mailbox_.Take()) {
      if (!done_ && restarting_ && it.kind == Mailbox::Item::kEvent && it.stream == stream_id_) {
        Reattached();
      }
      if (!done_) HandleItem(it);
    }
    if (!done_ && want_stdin && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) ReadInput();
  }
  Paint();
  if (editor_) editor_->Stop();
  std::fflush(stdout);
  return exit_code_;
}

// The renderer for this output, and the signals the loop reads.
void SessionView::Start(bool interactive) {
  interactive_ = interactive;
  RenderOptions ro;
  ro.color = o_.color;
  ro.live = live_;
  ro.spinner = !o_.plain;
  ro.echo_prompts = interactive;
  ro.own_client = o_.client_name;
  ro.columns = [] { return TerminalColumns(); };
  renderer_ = std::make_unique<Renderer>(ro);
  screen_ = renderer_->NewState();
  if (live_) std::setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
  SignalPipe::Get();
}

int SessionView::OneShot(const std::string& session_id, const std::string& prompt, bool ask) {
  ask_ = ask && !o_.json;
  live_ = isatty(1) && !o_.json;
  answer_only_ = !live_ && !o_.json;
  turn_.own_prompt = prompt;
  Start(/*interactive=*/false);
  AttachTo(session_id, /*show_history=*/false);
  if (!WaitForSnapshot()) return kExitError;
  if (!SendPrompt(prompt)) return kExitError;
  screen_.PromptSent(absl::Now());
  return Loop();
}

// libedit draws its prompt at the cursor, which must be at column 0: the live lines (a
// reply still streaming when we attached) go, and come back under the editor.
void SessionView::StartEditor() {
  int cols = TerminalColumns();
  WriteOut(live_area_.Erase(cols, 0));
  live_area_.Reset();
  last_lines_.clear();
  std::error_code ec;
  std::string dir =
      turn_.workdir.empty() ? std::filesystem::current_path(ec).string() : turn_.workdir;
  const RemoteTarget* remote = ActiveRemote();
  // Over ssh the project is HOST's: no local file is read for it (RemoteComplete).
  editor_ = std::make_unique<LineEditor>(remote != nullptr ? remote->host + ":" + dir : dir);
  editor_->SetPrompt(o_.color ? "\1\x1b[1;36m\1›\1\x1b[0m\1 " : "› ");
  editor_->SetCompletion(
      [sources = DaemonCompletionSources(
           [this]() -> auto& { return *stub_; }, dir, turn_.cwd),
       remote = remote != nullptr](const std::string& before) {
        return remote ? RemoteComplete(before, sources) : Complete(before, sources);
      },
      [this](const std::vector<std::string>& choices) {  // shown until the next key
        hint_ = absl::StrJoin(choices, "  ");
        hint_until_ = absl::Now() + absl::Minutes(10);
      });
  if (editor_->Start()) {
    live_area_.Draw({}, true, TerminalColumns());  // Start drew the prompt
  } else {
    editor_.reset();
  }
}

int SessionView::Interactive(const std::string& session_id) {
  live_ = isatty(1) != 0 && !o_.json;
  const bool terminal = isatty(0) != 0 && live_;
  ask_ = !o_.read_only && terminal;
  attention_ = Attention(terminal && Attention::EnabledByConfig());
  WriteOut(attention_.Begin());
  Start(/*interactive=*/true);
  AttachTo(session_id, /*show_history=*/true);
  if (!WaitForSnapshot()) return kExitError;
  switched_ = true;  // later snapshots are of sessions switched to (/clear, /fork)
  Paint(true);
  if (!o_.read_only && terminal) {
    StartEditor();
  } else if (o_.read_only && isatty(0)) {
    cbreak_ = std::make_unique<CbreakMode>();
  }
  Paint(true);
  return Loop();
}

}  // namespace agent::client
