// SessionView's link to the daemon: attaching to a session, waiting for its snapshot, what a
// lost stream means (a daemon stopped on purpose, or one to reconnect to, also over ssh), and
// the record of what this terminal has seen.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "client/link/remote.h"
#include "client/text/session_table.h"
#include "client/view/command_runner.h"
#include "client/view/session_view.h"
#include "common/paths.h"
#include "common/protocol.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr absl::Duration kSnapshotTimeout = absl::Seconds(30);
constexpr absl::Duration kReconnectStep = absl::Milliseconds(100);
constexpr absl::Duration kReconnectMaxStep = absl::Seconds(1);
constexpr absl::Duration kReconnectFor = absl::Seconds(30);
// Over ssh (remote.h) a lost link is a detach: the session runs on while the laptop sleeps or
// the network changes, so the view keeps trying longer, each try bounded.
constexpr absl::Duration kRemoteReconnectFor = absl::Minutes(5);
constexpr absl::Duration kRemoteReconnectMaxStep = absl::Seconds(5);
constexpr absl::Duration kRemoteTryFor = absl::Seconds(15);

std::string Short(const std::string& id) { return CommandRunner::Short(id); }

}  // namespace

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
  // What the restart may cut short, told once the session is back (Reattached).
  TurnState::CutShort cut;
  if (screen_.TurnRunning())
    cut.turn = turn_.running_prompt.empty() ? "(a prompt)" : turn_.running_prompt;
  if (const auto& a = screen_.pending_approval(); a.has_value() && a->child_session_id().empty()) {
    cut.question = a->has_question() ? "the question “" + a->question().text() + "”"
                                     : "the approval of " + a->tool() + ": " + a->summary();
  }
  if (!cut.turn.empty() || !cut.question.empty()) turn_.cut_short = std::move(cut);
  // The turn shown running is over for this screen: the new daemon's snapshot says what is.
  v1::Event idle;
  idle.mutable_turn_ended();
  Emit(renderer_->Render(idle, now, screen_));
  turn_.turns_waiting = 0;
  turn_.echoed.clear();
  turn_.answered_call.clear();
  FlushHeldNotices();
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

// The first event of the stream attached after a reconnect: the view is back. A turn the
// restart cut short (the new daemon's session is idle) is said, with the question it dropped.
void SessionView::Reattached(const v1::Event& first) {
  restarting_ = false;
  reconnect_until_ = absl::InfiniteFuture();
  reconnect_at_ = absl::InfiniteFuture();
  const RemoteTarget* remote = ActiveRemote();
  Emit(renderer_->Notice(remote != nullptr
                             ? absl::StrCat("reconnected to ", remote->host,
                                            ": reattached to session ", Short(turn_.session_id))
                             : "daemon back: reattached to session " + Short(turn_.session_id)));
  std::optional<TurnState::CutShort> cut = std::exchange(turn_.cut_short, std::nullopt);
  if (!cut.has_value() || !first.has_snapshot() ||
      first.snapshot().state() == v1::SESSION_STATE_RUNNING) {
    return;  // the same daemon goes on (over ssh), or the turn runs again
  }
  if (!cut->turn.empty()) {
    Emit(renderer_->Notice(absl::StrCat(
        "the daemon stopped during the turn for “", FitColumns(PrintableLine(cut->turn), 80),
        "”: it was cut short (a call it left running is marked interrupted); send a prompt to go "
        "on")));
  }
  if (!cut->question.empty()) {
    Emit(renderer_->Notice(absl::StrCat(FitColumns(PrintableLine(cut->question), 120),
                                        " was dropped: nobody answered it before the daemon "
                                        "stopped")));
  }
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

}  // namespace agent::client
