// SessionView's event handling: what each event of the attached session does to the screen
// (through the pure Renderer and the view's RenderState) and to the TurnState, and when a
// one-shot run is over. The loop, keys and painting are in session_view.cc.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "client/context_commands.h"
#include "client/plan_view.h"
#include "client/session_view.h"
#include "client/workdir_warning.h"
#include "google/protobuf/util/json_util.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

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

std::string FirstLine(const std::string& s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl) + " …";
}

}  // namespace

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
    case v1::Event::kSnapshot:
      OnSnapshot(e, now);
      return;
    case v1::Event::kUserMessage:
      OnUserMessage(e, now);
      return;
    case v1::Event::kApprovalRequested:
      OnApprovalRequested(e, now);
      return;
    case v1::Event::kApprovalResolved:
      OnApprovalResolved(e, now);
      return;
    case v1::Event::kUsage:
      turn_.prompt_tokens = e.usage().prompt_tokens();
      turn_.completion_tokens = e.usage().completion_tokens();
      return;
    case v1::Event::kClientsChanged:
      OnClientsChanged(e.clients_changed());
      return;
    case v1::Event::kTurnEnded:
      OnTurnEnded(e, now);
      return;
    case v1::Event::kPlanUpdated:  // plan_view.h
      if (!o_.json) Emit(PlanText(e.plan_updated()));
      return;
    case v1::Event::kNotice:
      if (!o_.json) Emit(renderer_->Notice(e.notice().text()));
      return;
    default: {
      // With --json the events are the output; the renderer still follows the turn.
      std::string text = renderer_->Render(e, now, screen_);
      if (!o_.json) Emit(text);
      return;
    }
  }
}

void SessionView::OnSnapshot(const v1::Event& e, absl::Time now) {
  const v1::Snapshot& s = e.snapshot();
  bool first = !got_snapshot_;
  got_snapshot_ = true;
  if (!s.session().id().empty()) turn_.session_id = s.session().id();
  turn_.workdir = s.session().workdir();
  turn_.model = s.session().model();
  turn_.clients.assign(s.clients().begin(), s.clients().end());
  if (first && interactive_ && !o_.json && !switched_) Emit(HeaderLine());
  if (first && !switched_ && !o_.read_only) WarnIfWide();
  if (!o_.json) {
    if (first && show_history_) {
      Emit(renderer_->Render(e, now, screen_));
    } else {
      // A snapshot after a lag, or of a session we switched to: the screen already
      // shows its history; only the state is taken.
      v1::Event state = e;
      state.mutable_snapshot()->clear_transcript_json();
      Emit(renderer_->Render(state, now, screen_));
    }
  }
  if (screen_.pending_approval().has_value()) {
    screen_.SetApprovalLine(ask_ && !o_.read_only);
    if (ask_ && !o_.read_only && !editor_ && !cbreak_ && !interactive_) {
      cbreak_ = std::make_unique<CbreakMode>();
    }
  }
  if (first && !o_.json && interactive_) {
    for (const std::string& q : s.queued_prompts()) Emit(renderer_->Notice("queued: " + q));
  }
  if (first && interactive_ && !o_.json) Emit(PlanText(s.plan()));
  if (first && s.state() != v1::SESSION_STATE_IDLE) turn_.turns_to_skip = 1;
  if (first) turn_.turns_to_skip += s.queued_prompts_size();
}

void SessionView::OnUserMessage(const v1::Event& e, absl::Time now) {
  const v1::UserMessage& u = e.user_message();
  bool own = u.client_name() == o_.client_name;
  if (own && !turn_.own_prompt.empty() && u.text() == turn_.own_prompt) {
    turn_.own_turn_started = true;
  }
  if (own && !turn_.echoed.empty() && turn_.echoed.front().text == u.text()) {
    // Shown when it was typed; a queued one is recalled where its answer starts.
    if (turn_.echoed.front().queued && !o_.json) {
      Emit(renderer_->EndLine(screen_) + renderer_->Notice("› " + FirstLine(u.text())));
    }
    turn_.echoed.pop_front();
  } else if (!o_.json) {
    v1::Event shown = e;
    if (own) shown.mutable_user_message()->clear_client_name();
    Emit(renderer_->Render(shown, now, screen_));
  }
}

void SessionView::OnApprovalRequested(const v1::Event& e, absl::Time now) {
  if (!o_.json) Emit(renderer_->Render(e, now, screen_));
  const v1::PendingApproval& a = e.approval_requested().approval();
  if (o_.read_only) {
    if (o_.json) renderer_->Render(e, now, screen_);
    screen_.SetApprovalLine(false);
  } else if (ask_) {
    if (o_.json) renderer_->Render(e, now, screen_);
    screen_.SetApprovalLine(true);
    if (!live_) Emit(renderer_->ApprovalQuestion(a) + "\n");
    if (!editor_ && !cbreak_) cbreak_ = std::make_unique<CbreakMode>();
  } else {
    // No terminal to ask on: --yes allows, otherwise the call is denied with a reason. A call
    // that needs a person's answer is never allowed here. FAILED_PRECONDITION: another
    // client was first.
    const bool allow = o_.yes && !a.requires_person();
    std::string reason;
    if (!o_.yes) reason = "not approved: the user ran agent without --yes";
    if (o_.yes && !allow) {
      reason = "not approved: only a person may allow this call (" + a.person_reason() +
               "), and nobody was asked";
    }
    (void)commands_.Approve(turn_.session_id, a.call_id(),
                            allow ? v1::DECISION_ALLOW_ONCE : v1::DECISION_DENY, reason);
  }
}

void SessionView::OnApprovalResolved(const v1::Event& e, absl::Time now) {
  std::string text = renderer_->Render(e, now, screen_);
  if (!o_.json) Emit(text);
  turn_.answered_call.clear();
  if (!editor_ && !o_.read_only) cbreak_.reset();  // one-shot: the question is over
}

void SessionView::OnClientsChanged(const v1::ClientsChanged& changed) {
  std::vector<std::string> now_clients(changed.clients().begin(), changed.clients().end());
  const std::vector<std::string>& before = turn_.clients;
  if (interactive_ && !o_.json) {
    for (const std::string& c : now_clients) {
      if (c != o_.client_name && std::find(before.begin(), before.end(), c) == before.end()) {
        Emit(renderer_->Notice("· " + c + " attached"));
      }
    }
    for (const std::string& c : before) {
      if (c != o_.client_name &&
          std::find(now_clients.begin(), now_clients.end(), c) == now_clients.end()) {
        Emit(renderer_->Notice("· " + c + " left"));
      }
    }
  }
  turn_.clients = std::move(now_clients);
}

void SessionView::OnTurnEnded(const v1::Event& e, absl::Time now) {
  std::string rendered = renderer_->Render(e, now, screen_);
  if (!o_.json) Emit(rendered);
  if (!interactive_) {
    if (!turn_.OwnTurnEnds()) return;
    const v1::TurnEnded& t = e.turn_ended();
    RememberTurnUsage(t.usage());  // for --usage
    if (t.outcome() == v1::TURN_OUTCOME_ERROR && !live_) {
      // The renderer showed it; scripts read the one-line reason on stderr.
      Paint();
      std::fprintf(stderr, "agent: %s\n", t.error().c_str());
    }
    exit_code_ = ExitFor(t.outcome());
    Leave("");
    return;
  }
  if (turn_.turns_waiting > 0) --turn_.turns_waiting;
  if (!o_.json) Emit(renderer_->StatusLine(turn_.Status(o_.client_name, o_.read_only)));
  if (piped_input_ && input_ended_ && turn_.turns_waiting == 0) Leave("");
}

void SessionView::WarnIfWide() {
  const char* home = std::getenv("HOME");
  std::string warning = WideWorkdirWarning(turn_.workdir, home != nullptr ? home : "");
  if (warning.empty()) return;
  // Not in the rendered stream: --json stdout stays events only.
  if (interactive_ && !o_.json) {
    Emit(renderer_->Colored("33", "warning: " + warning) + "\n");
  } else {
    std::fprintf(stderr, "agent: warning: %s\n", warning.c_str());
  }
}

}  // namespace agent::client
