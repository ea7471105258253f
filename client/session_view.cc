#include "client/session_view.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "client/slash_commands.h"
#include "client/tty.h"
#include "common/config.h"
#include "common/protocol.h"
#include "google/protobuf/util/json_util.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr absl::Duration kSnapshotTimeout = absl::Seconds(30);
constexpr absl::Duration kDoubleInterrupt = absl::Seconds(1);
constexpr int kSpinnerFrameMs = 100;

std::string EventJson(const v1::Event& e) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(e, &out, o);
  return out;
}

int ExitFor(v1::TurnOutcome o) {
  switch (o) {
    case v1::TURN_OUTCOME_DONE:
      return kExitDone;
    case v1::TURN_OUTCOME_CANCELLED:
      return kExitCancelled;
    case v1::TURN_OUTCOME_MAX_STEPS:
      return kExitMaxSteps;
    default:
      return kExitError;
  }
}

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

std::string FirstLine(const std::string& s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl) + " …";
}

}  // namespace

SessionView::SessionView(v1::AgentDaemon::Stub& stub, const ClientOptions& options)
    : stub_(stub), o_(options) {}

SessionView::~SessionView() {
  stream_.reset();
  for (std::thread& t : workers_) t.join();
  editor_.reset();
  cbreak_.reset();
  std::fflush(stdout);
}

void SessionView::WriteOut(const std::string& s) {
  if (!s.empty()) std::fwrite(s.data(), 1, s.size(), stdout);
}

void SessionView::AttachTo(const std::string& id, bool show_history) {
  stream_.reset();
  ++stream_id_;
  got_snapshot_ = false;
  show_history_ = show_history;
  session_id_ = id;
  v1::AttachRequest req;
  req.set_session_id(id);
  req.set_client_name(o_.client_name);
  req.set_read_only(o_.read_only);
  req.set_protocol_version(kProtocolVersion);
  stream_ = std::make_unique<EventStream>(stub_, req, mailbox_, stream_id_);
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

bool SessionView::SendPrompt(const std::string& text) {
  grpc::ClientContext ctx;
  v1::SendPromptRequest req;
  req.set_session_id(session_id_);
  req.set_text(text);
  req.set_client_name(o_.client_name);
  *req.mutable_model() = ModelFromEnv();
  *req.mutable_tool_env() = ToolEnvFromProcess();
  v1::SendPromptResponse resp;
  grpc::Status s = stub_.SendPrompt(&ctx, req, &resp);
  if (s.ok()) return true;
  if (interactive_) {
    Emit(renderer_->ErrorLine(s.error_message()));
  } else {
    std::fprintf(stderr, "agent: %s\n", s.error_message().c_str());
  }
  return false;
}

void SessionView::CancelTurn() {
  grpc::ClientContext ctx;
  v1::CancelRequest req;
  req.set_session_id(session_id_);
  req.set_client_name(o_.client_name);
  v1::CancelResponse resp;
  grpc::Status s = stub_.Cancel(&ctx, req, &resp);
  if (!s.ok() && interactive_) Emit(renderer_->ErrorLine(s.error_message()));
}

void SessionView::Answer(char key) {
  const auto& pending = renderer_->pending_approval();
  if (!pending.has_value() || answered_call_ == pending->call_id()) return;
  v1::ApproveRequest req;
  req.set_session_id(session_id_);
  req.set_call_id(pending->call_id());
  req.set_client_name(o_.client_name);
  req.set_decision(key == 'y'   ? v1::DECISION_ALLOW_ONCE
                   : key == 'a' ? v1::DECISION_ALLOW_ALWAYS
                                : v1::DECISION_DENY);
  grpc::ClientContext ctx;
  v1::ApproveResponse resp;
  grpc::Status s = stub_.Approve(&ctx, req, &resp);
  // FAILED_PRECONDITION: another client answered first; its ApprovalResolved is on the way.
  if (s.ok() || s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    answered_call_ = pending->call_id();
  } else {
    Emit(renderer_->ErrorLine(s.error_message()));
  }
}

bool SessionView::Asking() const {
  return ask_ && !o_.read_only && renderer_->pending_approval().has_value() &&
         answered_call_ != renderer_->pending_approval()->call_id();
}

bool SessionView::EditorShown() const {
  return editor_ != nullptr && editor_->started() && !done_ &&
         !renderer_->pending_approval().has_value();
}

StatusInfo SessionView::Status() const {
  StatusInfo s;
  s.session_id = session_id_;
  s.model = model_;
  s.prompt_tokens = prompt_tokens_;
  s.completion_tokens = completion_tokens_;
  s.clients = clients_;
  s.own_client = o_.client_name;
  s.read_only = o_.read_only;
  return s;
}

std::string SessionView::HeaderLine() const {
  if (o_.read_only) {
    return renderer_->Notice(absl::StrCat("watching session ", Short(session_id_), " in ", workdir_,
                                          " (read-only) — Ctrl-D or q leaves"));
  }
  return renderer_->Notice(
      absl::StrCat("session ", Short(session_id_), " in ", workdir_,
                   " — Ctrl-D detaches, Ctrl-C cancels a turn, /help for commands"));
}

void SessionView::Leave(const std::string& message) {
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
  std::fflush(stdout);
  if (editor_) editor_->Stop();
  done_ = true;
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
  std::vector<std::string> lines = renderer_->LiveLines(now, cols);
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
  if (live_ && renderer_->Animating()) t = kSpinnerFrameMs;
  if (!hint_.empty()) {
    int64_t left = absl::ToInt64Milliseconds(hint_until_ - absl::Now()) + 1;
    left = std::max<int64_t>(left, 1);
    t = t < 0 ? left : std::min(t, left);
  }
  return static_cast<int>(t);
}

void SessionView::HandleItem(Mailbox::Item& item) {
  switch (item.kind) {
    case Mailbox::Item::kNotice:
      Emit(item.error ? renderer_->ErrorLine(item.text) : renderer_->Notice(item.text));
      return;
    case Mailbox::Item::kEnd: {
      if (item.stream != stream_id_) return;  // a stream we left for another session
      std::string msg = item.status.ok() ? "agentd ended the stream" : item.status.error_message();
      Leave("");
      std::fprintf(stderr, "\nagent: lost the daemon: %s\n", msg.c_str());
      exit_code_ = kExitError;
      return;
    }
    case Mailbox::Item::kEvent:
      if (item.stream != stream_id_) return;
      HandleEvent(item.event);
      return;
  }
}

void SessionView::HandleEvent(const v1::Event& e) {
  absl::Time now = absl::Now();
  if (o_.json) WriteOut(EventJson(e) + "\n");
  switch (e.kind_case()) {
    case v1::Event::kSnapshot: {
      const v1::Snapshot& s = e.snapshot();
      bool first = !got_snapshot_;
      got_snapshot_ = true;
      if (!s.session().id().empty()) session_id_ = s.session().id();
      workdir_ = s.session().workdir();
      model_ = s.session().model();
      clients_.assign(s.clients().begin(), s.clients().end());
      if (first && interactive_ && !o_.json && !switched_) Emit(HeaderLine());
      if (!o_.json) {
        if (first && show_history_) {
          Emit(renderer_->Render(e, now));
        } else {
          // A snapshot after a lag, or of a session we switched to: the screen already
          // shows its history; only the state is taken.
          v1::Event state = e;
          state.mutable_snapshot()->clear_transcript_json();
          Emit(renderer_->Render(state, now));
        }
      }
      if (renderer_->pending_approval().has_value()) {
        renderer_->SetApprovalLine(ask_ && !o_.read_only);
        if (ask_ && !o_.read_only && !editor_ && !cbreak_ && !interactive_) {
          cbreak_ = std::make_unique<CbreakMode>();
        }
      }
      if (first && !o_.json && interactive_) {
        for (const std::string& q : s.queued_prompts()) Emit(renderer_->Notice("queued: " + q));
      }
      if (first && s.state() != v1::SESSION_STATE_IDLE) turns_to_skip_ = 1;
      if (first) turns_to_skip_ += s.queued_prompts_size();
      break;
    }
    case v1::Event::kUserMessage: {
      const v1::UserMessage& u = e.user_message();
      bool own = u.client_name() == o_.client_name;
      if (own && !own_prompt_.empty() && u.text() == own_prompt_) own_turn_started_ = true;
      if (own && !echoed_.empty() && echoed_.front().text == u.text()) {
        // Shown when it was typed; a queued one is recalled where its answer starts.
        if (echoed_.front().queued && !o_.json) {
          Emit(renderer_->EndLine() + renderer_->Notice("› " + FirstLine(u.text())));
        }
        echoed_.pop_front();
      } else if (!o_.json) {
        v1::Event shown = e;
        if (own) shown.mutable_user_message()->clear_client_name();
        Emit(renderer_->Render(shown, now));
      }
      break;
    }
    case v1::Event::kApprovalRequested: {
      if (!o_.json) Emit(renderer_->Render(e, now));
      const v1::PendingApproval& a = e.approval_requested().approval();
      if (o_.read_only) {
        if (o_.json) renderer_->Render(e, now);
        renderer_->SetApprovalLine(false);
      } else if (ask_) {
        if (o_.json) renderer_->Render(e, now);
        renderer_->SetApprovalLine(true);
        if (!live_) Emit(renderer_->ApprovalQuestion(a) + "\n");
        if (!editor_ && !cbreak_) cbreak_ = std::make_unique<CbreakMode>();
      } else {
        // No terminal to ask on: --yes allows, otherwise the call is denied with a reason.
        v1::ApproveRequest req;
        req.set_session_id(session_id_);
        req.set_call_id(a.call_id());
        req.set_client_name(o_.client_name);
        req.set_decision(o_.yes ? v1::DECISION_ALLOW_ONCE : v1::DECISION_DENY);
        if (!o_.yes) req.set_reason("not approved: the user ran agent without --yes");
        grpc::ClientContext ctx;
        v1::ApproveResponse resp;
        (void)stub_.Approve(&ctx, req, &resp);  // FAILED_PRECONDITION: another was first
      }
      break;
    }
    case v1::Event::kApprovalResolved:
      if (!o_.json) {
        Emit(renderer_->Render(e, now));
      } else {
        renderer_->Render(e, now);
      }
      answered_call_.clear();
      if (!editor_ && !o_.read_only) cbreak_.reset();  // one-shot: the question is over
      break;
    case v1::Event::kUsage:
      prompt_tokens_ = e.usage().prompt_tokens();
      completion_tokens_ = e.usage().completion_tokens();
      break;
    case v1::Event::kClientsChanged: {
      std::vector<std::string> now_clients(e.clients_changed().clients().begin(),
                                           e.clients_changed().clients().end());
      if (interactive_ && !o_.json) {
        for (const std::string& c : now_clients) {
          if (c != o_.client_name &&
              std::find(clients_.begin(), clients_.end(), c) == clients_.end()) {
            Emit(renderer_->Notice("· " + c + " attached"));
          }
        }
        for (const std::string& c : clients_) {
          if (c != o_.client_name &&
              std::find(now_clients.begin(), now_clients.end(), c) == now_clients.end()) {
            Emit(renderer_->Notice("· " + c + " left"));
          }
        }
      }
      clients_ = std::move(now_clients);
      break;
    }
    case v1::Event::kTurnEnded: {
      std::string rendered = renderer_->Render(e, now);
      if (!o_.json) Emit(rendered);
      if (!interactive_) {
        bool ours = own_turn_started_ || turns_to_skip_ <= 0;
        if (!ours) {
          --turns_to_skip_;
          break;
        }
        const v1::TurnEnded& t = e.turn_ended();
        if (t.outcome() == v1::TURN_OUTCOME_ERROR && !live_) {
          // The renderer showed it; scripts read the one-line reason on stderr.
          Paint();
          std::fprintf(stderr, "agent: %s\n", t.error().c_str());
        }
        exit_code_ = ExitFor(t.outcome());
        Leave("");
        break;
      }
      if (turns_waiting_ > 0) --turns_waiting_;
      if (!o_.json) Emit(renderer_->StatusLine(Status()));
      if (piped_input_ && input_ended_ && turns_waiting_ == 0) Leave("");
      break;
    }
    default:
      if (o_.json) {
        renderer_->Render(e, now);
      } else {
        Emit(renderer_->Render(e, now));
      }
      break;
  }
}

void SessionView::HandleSignal(int sig) {
  absl::Time now = absl::Now();
  switch (sig) {
    case SIGINT:
      if (!interactive_) {
        if (++interrupts_ >= 2) {
          exit_code_ = kExitCancelled;
          Leave("");
          return;
        }
        CancelTurn();
        return;
      }
      if (o_.read_only) {
        Leave(renderer_->Notice("left; the session goes on."));
        return;
      }
      if (renderer_->TurnRunning() || turns_waiting_ > 0 || renderer_->pending_approval()) {
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
        Leave(renderer_->Notice(absl::StrCat(
            "detached; the session goes on. Come back with: agent attach ", Short(session_id_))));
        return;
      }
      last_interrupt_ = now;
      hint_ = "Ctrl-C again to leave (the session goes on); Ctrl-D detaches too";
      hint_until_ = now + kDoubleInterrupt;
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
      exit_code_ = interactive_ ? kExitDone : 128 + sig;
      Leave("");
      return;
    default:
      return;
  }
}

void SessionView::HandleInput(const std::string& bytes) {
  if (Asking()) {
    for (char c : bytes) {
      char k = static_cast<char>(c | 0x20);
      if (k == 'y' || k == 'n' || k == 'a') {
        Answer(k);
        break;
      }
    }
    return;
  }
  if (o_.read_only) {
    for (char c : bytes) {
      if (c == 0x04 || c == 'q') {
        Leave(renderer_->Notice("left; the session goes on."));
        return;
      }
    }
    return;
  }
  if (renderer_->pending_approval().has_value()) return;  // answered; the result is coming
  if (!interactive_) return;
  if (piped_input_ || !editor_) {
    piped_buffer_ += bytes;
    size_t nl;
    while ((nl = piped_buffer_.find('\n')) != std::string::npos && !done_) {
      std::string line = piped_buffer_.substr(0, nl);
      piped_buffer_.erase(0, nl + 1);
      HandleLine(line);
    }
    return;
  }
  hint_.clear();
  for (LineEditor::Result& r : editor_->Feed(bytes)) {
    if (done_) return;
    if (r.kind == LineEditor::Result::kEof) {
      Leave(renderer_->Notice(absl::StrCat(
          "detached; the session goes on. Come back with: agent attach ", Short(session_id_))));
      return;
    }
    HandleLine(r.text);
  }
}

void SessionView::HandleLine(const std::string& line) {
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
  if (std::optional<SlashCommand> c = ParseSlashCommand(line); c.has_value()) {
    if (editor_) editor_->AddHistory(line);
    Emit(renderer_->UserLine(line, ""));
    HandleCommand(*c);
    Paint(true);
    return;
  }
  std::string text = line[0] == '/' && line.size() > 1 && line[1] == '/' ? line.substr(1) : line;
  if (editor_) editor_->AddHistory(text);
  bool busy = renderer_->TurnRunning() || turns_waiting_ > 0;
  Emit(renderer_->UserLine(text, ""));
  if (busy) Emit(renderer_->Notice("  (queued: it runs when the current turn ends)"));
  if (SendPrompt(text)) {
    echoed_.push_back({text, busy});
    ++turns_waiting_;
    renderer_->PromptSent(absl::Now());
  }
  Paint(true);
}

void SessionView::HandleCommand(const SlashCommand& c) {
  if (std::string missing = MissingArgument(c); !missing.empty()) {
    Emit(renderer_->ErrorLine(missing));
    return;
  }
  switch (c.kind) {
    case SlashCommand::kHelp:
      Emit(SlashHelp());
      return;
    case SlashCommand::kStatus:
      Emit(renderer_->StatusLine(Status()));
      return;
    case SlashCommand::kDetach:
      Leave(renderer_->Notice(absl::StrCat(
          "detached; the session goes on. Come back with: agent attach ", Short(session_id_))));
      return;
    case SlashCommand::kCompact: {
      Emit(renderer_->Notice("compacting…"));
      std::string id = session_id_;
      workers_.emplace_back([this, id] {
        grpc::ClientContext ctx;
        v1::CompactRequest req;
        req.set_session_id(id);
        v1::CompactResponse resp;
        grpc::Status s = stub_.Compact(&ctx, req, &resp);
        if (!s.ok()) mailbox_.PostNotice(s.error_message(), true);
      });
      return;
    }
    case SlashCommand::kClear: {
      auto s = CreateSessionHere(stub_, o_, o_.yes ? v1::POLICY_MODE_YES : v1::POLICY_MODE_ASK);
      if (!s.ok()) {
        Emit(renderer_->ErrorLine(std::string(s.status().message())));
        return;
      }
      std::string old = session_id_;
      AttachTo(s->id(), false);
      echoed_.clear();
      turns_waiting_ = 0;
      prompt_tokens_ = -1;
      Emit(renderer_->Notice(absl::StrCat("new session ", Short(s->id()),
                                          "; the previous one stays: agent attach ", Short(old))));
      return;
    }
    case SlashCommand::kFork: {
      grpc::ClientContext ctx;
      v1::ForkSessionRequest req;
      req.set_session_id(session_id_);
      v1::Session fork;
      grpc::Status s = stub_.ForkSession(&ctx, req, &fork);
      if (!s.ok()) {
        Emit(renderer_->ErrorLine(s.error_message()));
        return;
      }
      std::string old = session_id_;
      AttachTo(fork.id(), false);
      echoed_.clear();
      turns_waiting_ = 0;
      Emit(renderer_->Notice(absl::StrCat("forked ", Short(old), " → ", Short(fork.id()),
                                          "; you are in the fork (the original: agent attach ",
                                          Short(old), ")")));
      return;
    }
    case SlashCommand::kSessions: {
      grpc::ClientContext ctx;
      v1::ListSessionsRequest req;
      req.set_workdir(workdir_);
      v1::ListSessionsResponse resp;
      grpc::Status s = stub_.ListSessions(&ctx, req, &resp);
      if (!s.ok()) {
        Emit(renderer_->ErrorLine(s.error_message()));
        return;
      }
      for (const v1::Session& x : resp.sessions()) {
        std::string mark = x.id() == session_id_ ? "* " : "  ";
        Emit(absl::StrCat(
            mark, Short(x.id()), "  ", StateName(x.state()), "  ", x.message_count(), " msgs  ",
            x.title(),
            x.attached_clients() > 0 ? absl::StrCat("  (", x.attached_clients(), " attached)") : "",
            "\n"));
      }
      Emit(renderer_->Notice("switch with: agent attach ID"));
      return;
    }
    case SlashCommand::kModel:
    case SlashCommand::kAllow: {
      grpc::ClientContext ctx;
      v1::SetPolicyRequest req;
      req.set_session_id(session_id_);
      if (c.kind == SlashCommand::kModel) {
        req.set_model(c.argument);
      } else {
        req.add_add_allow(c.argument);
      }
      v1::SetPolicyResponse resp;
      grpc::Status s = stub_.SetPolicy(&ctx, req, &resp);
      if (!s.ok()) {
        Emit(renderer_->ErrorLine(s.error_message()));
        return;
      }
      if (c.kind == SlashCommand::kModel) {
        model_ = c.argument;
        Emit(renderer_->Notice("model " + c.argument + " from the next request"));
      } else {
        Emit(renderer_->Notice("recorded in .agent/settings.json: allow " + c.argument));
      }
      return;
    }
    case SlashCommand::kUnknown:
      Emit(renderer_->ErrorLine("unknown command /" + c.name + "; /help lists them"));
      return;
  }
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
    for (Mailbox::Item& it : mailbox_.Take()) {
      if (!done_) HandleItem(it);
    }
    if (!done_ && want_stdin && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[4096];
      ssize_t got = ::read(0, buf, sizeof buf);
      if (got > 0) {
        HandleInput(std::string(buf, static_cast<size_t>(got)));
      } else if (got == 0 || errno != EINTR) {
        input_ended_ = true;
        if (piped_input_) {
          if (!piped_buffer_.empty()) HandleLine(piped_buffer_);
          piped_buffer_.clear();
          if (turns_waiting_ == 0 && !done_) Leave("");
        } else if (interactive_ && !done_) {
          Leave("");
        }
      }
    }
  }
  Paint();
  if (editor_) editor_->Stop();
  std::fflush(stdout);
  return exit_code_;
}

int SessionView::OneShot(const std::string& session_id, const std::string& prompt, bool ask) {
  interactive_ = false;
  ask_ = ask && !o_.json;
  live_ = isatty(1) && !o_.json;
  own_prompt_ = prompt;
  RenderOptions ro;
  ro.color = o_.color;
  ro.live = live_;
  ro.spinner = !o_.plain;
  ro.own_client = o_.client_name;
  renderer_ = std::make_unique<Renderer>(ro);
  if (live_) std::setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
  SignalPipe::Get();
  AttachTo(session_id, /*show_history=*/false);
  if (!WaitForSnapshot()) return kExitError;
  if (!SendPrompt(prompt)) return kExitError;
  renderer_->PromptSent(absl::Now());
  return Loop();
}

int SessionView::Interactive(const std::string& session_id) {
  interactive_ = true;
  live_ = isatty(1) != 0 && !o_.json;
  piped_input_ = !o_.read_only && (!isatty(0) || !live_);
  ask_ = !o_.read_only && !piped_input_;
  RenderOptions ro;
  ro.color = o_.color;
  ro.live = live_;
  ro.spinner = !o_.plain;
  ro.echo_prompts = true;
  ro.own_client = o_.client_name;
  renderer_ = std::make_unique<Renderer>(ro);
  if (live_) std::setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
  SignalPipe::Get();
  AttachTo(session_id, /*show_history=*/true);
  if (!WaitForSnapshot()) return kExitError;
  switched_ = true;  // later snapshots are of sessions switched to (/clear, /fork)
  Paint(true);
  if (!o_.read_only && !piped_input_) {
    // libedit draws its prompt at the cursor, which must be at column 0: the live lines
    // (a reply still streaming when we attached) go, and come back under the editor.
    int cols = TerminalColumns();
    WriteOut(live_area_.Erase(cols, 0));
    live_area_.Reset();
    last_lines_.clear();
    std::error_code ec;
    std::string dir = workdir_.empty() ? std::filesystem::current_path(ec).string() : workdir_;
    editor_ = std::make_unique<LineEditor>(dir);
    editor_->SetPrompt(o_.color ? "\1\x1b[1;36m\1›\1\x1b[0m\1 " : "› ");
    if (editor_->Start()) {
      live_area_.Draw({}, true, TerminalColumns());  // Start drew the prompt
    } else {
      editor_.reset();
      piped_input_ = true;
    }
  } else if (o_.read_only && isatty(0)) {
    cbreak_ = std::make_unique<CbreakMode>();
  }
  Paint(true);
  return Loop();
}

}  // namespace agent::client
