// SessionView's frame: its life, the loop that waits on the stream, the keys and the clock,
// and the painting of the screen. Keys and typed lines are in session_input.cc, the link to the
// daemon (attach, a lost stream, reconnecting) in session_link.cc, events in session_events.cc.
#include "client/view/session_view.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "client/terminal/tty.h"
#include "client/text/session_table.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr int kSpinnerFrameMs = 100;

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

std::string SessionView::HeaderLine() const {
  if (o_.read_only) {
    return renderer_->Notice(absl::StrCat("watching session ",
                                          CommandRunner::Short(turn_.session_id), " in ",
                                          turn_.workdir, " (read-only) — Ctrl-D or q leaves"));
  }
  std::string header = renderer_->Notice(
      absl::StrCat("session ", CommandRunner::Short(turn_.session_id), " in ", turn_.workdir,
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
        Reattached(it.event);
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
