// SessionView's input: the keys read in cbreak mode and the line editor's lines, what Ctrl-C
// and the signals do (a cancel, then a leave), an approval question's keys, and a typed prompt
// or slash command sent on.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/input/completion_sources.h"
#include "client/input/remote_completion.h"
#include "client/input/slash_commands.h"
#include "client/link/remote.h"
#include "client/terminal/tty.h"
#include "client/view/command_runner.h"
#include "client/view/prompt_echo.h"
#include "client/view/session_view.h"
#include "common/config.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr absl::Duration kDoubleInterrupt = absl::Seconds(1);
constexpr absl::Duration kSignalGrace = absl::Seconds(10);
constexpr char kChildDetailKey = 0x0f;  // Ctrl-O

std::string Short(const std::string& id) { return CommandRunner::Short(id); }

}  // namespace

bool SessionView::SendPrompt(const std::string& text, bool steer, bool* steered) {
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
  grpc::Status s = commands_->SendPrompt(turn_.session_id, text, steer, steered);
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
      // Its prompt is sent, so its turn runs or is about to even when no event said so yet.
      if (signal_exit_ != 0) {
        exit_code_ = 128 + sig;
        Leave("");
        return;
      }
      signal_exit_ = 128 + sig;
      leave_by_ = absl::Now() + kSignalGrace;
      if (screen_.TurnRunning() || turn_.own_turn_started) {
        CancelTurn();
      } else {
        cancel_on_start_ = true;
      }
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
      // At the model's question the typed words are the answer; at an approval, the denial's.
      const bool question =
          screen_.pending_approval().has_value() && screen_.pending_approval()->has_question();
      Answer(question && !reason.empty() ? 'y' : 'n', reason);
      break;
    }
    case DenyMessageInput::Outcome::kBack:
    case DenyMessageInput::Outcome::kTyping:
      break;
  }
  Paint(true);
}

// At the model's question (ask_user): a digit picks an option, t types an answer, n, q or a lone
// Esc give none.
void SessionView::HandleQuestionKey(char c) {
  const v1::Question& q = screen_.pending_approval()->question();
  if (c >= '1' && c <= '9' && c - '1' < q.options_size()) {
    Answer('y', q.options(c - '1'));
    return;
  }
  const char k = static_cast<char>(c | 0x20);
  if (k == 'n' || k == 'q') {
    Answer('n');
  } else if (k == 't') {
    deny_message_.Start("Your answer: ");
    if (!live_) Emit(renderer_->Notice("type your answer (Enter sends, Esc goes back):"));
    Paint(true);
  }
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
    if (screen_.pending_approval().has_value() && screen_.pending_approval()->has_question()) {
      HandleQuestionKey(c);
      return;
    }
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
    HandleLine(r.text, r.queue);
  }
}

void SessionView::HandleLine(const std::string& line, bool queue) {
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
  // Enter while a turn runs steers it: the model reads the line at its next step. Alt-Enter
  // queues it for when the turn ends.
  const bool steer = busy && !queue && screen_.TurnRunning();
  if (busy && !steer) Emit(renderer_->Notice("  (queued: it runs when the current turn ends)"));
  bool steered = false;
  if (SendPrompt(text, steer, &steered)) {
    if (steered) {
      Emit(
          renderer_->Notice("  (steering: the model reads it at its next step; Alt-Enter "
                            "queues instead)"));
    } else {
      if (steer) Emit(renderer_->Notice("  (the turn had ended: it runs as the next prompt)"));
      turn_.echoed.push_back({text, busy});
      ++turn_.turns_waiting;
      screen_.PromptSent(absl::Now());
    }
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

}  // namespace agent::client
