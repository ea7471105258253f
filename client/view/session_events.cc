// SessionView's event handling: what each event of the attached session does to the screen
// (through the pure Renderer and the view's RenderState) and to the TurnState, and when a
// one-shot run is over. The loop, keys and painting are in session_view.cc; approvals, the
// model's questions and the notices held while one is shown in session_approvals.cc.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/commands/context_commands.h"
#include "client/link/remote.h"
#include "client/text/checkpoint_text.h"
#include "client/text/child_view.h"
#include "client/text/history.h"
#include "client/text/json_events.h"
#include "client/text/plan_view.h"
#include "client/text/policy_mode.h"
#include "client/text/session_table.h"
#include "client/view/prompt_echo.h"
#include "client/view/session_view.h"
#include "client/view/workdir_warning.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

int ExitFor(const v1::TurnEnded& t) {
  switch (t.outcome()) {
    case v1::TURN_OUTCOME_DONE:
      return t.denied_calls() > 0 ? kExitDenied : kExitDone;
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
    case Mailbox::Item::kEnd:
      if (item.stream != stream_id_) return;  // a stream we left for another session
      if (removed_) return;                   // SessionRemoved said it: the end is expected
      StreamLost(item.status);
      return;
    case Mailbox::Item::kEvent:
      if (item.stream != stream_id_) return;
      HandleEvent(item.event);
      return;
  }
}

void SessionView::HandleEvent(const v1::Event& e) {
  absl::Time now = absl::Now();
  if (o_.json) {
    // A snapshot holds the whole transcript and system prompt: a short line unless asked.
    const bool brief = e.has_snapshot() && !o_.json_snapshot;
    WriteOut((brief ? SessionStartedJsonLine(e) : EventJsonLine(e)) + "\n");
  }
  if (!e.epoch().empty()) epoch_ = e.epoch();
  last_seq_ = std::max(last_seq_, e.seq());
  CountMessages(e);
  if (answer_only_) {
    AnswerFilter::Out out = answer_.OnEvent(e);
    Trace(out.narration);
    Emit(out.answer);
    if (e.has_text_delta()) return;  // held by answer_
  }
  switch (e.kind_case()) {
    case v1::Event::kSnapshot:
      OnSnapshot(e, now);
      return;
    case v1::Event::kUserMessage:
      OnUserMessage(e, now);
      return;
    case v1::Event::kSteered:
      OnSteered(e.steered());
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
      if (!o_.json) Trace(PlanText(e.plan_updated()));
      return;
    case v1::Event::kPolicyChanged:  // every client shows who changed the mode
      turn_.mode = PolicyModeName(e.policy_changed().mode());
      if (!o_.json && interactive_) {  // a one-shot's stdout is its answer
        EmitNotice(renderer_->Notice(
            PolicyChangedLine(e.policy_changed().mode(), e.policy_changed().client_name())));
      }
      return;
    case v1::Event::kNotice:
      if (o_.json) return;
      if (interactive_) {
        EmitNotice(renderer_->Notice(e.notice().text()));
        return;
      }
      // A one-shot's stdout is its answer; what the daemon tells the person goes to stderr.
      Paint();
      std::fprintf(stderr, "agent: %s\n", TerminalSafe(e.notice().text()).c_str());
      return;
    case v1::Event::kToolResult:
      OnToolResult(e, now);
      return;
    case v1::Event::kChildProgress: {  // child_view.h
      // A one-shot's stdout is its answer: a child's summary goes to stderr, if a terminal.
      const bool to_stderr = !interactive_ && !live_;
      if (to_stderr && e.child_progress().finished()) Emit(renderer_->EndLine(screen_));
      std::string text = renderer_->Render(e, now, screen_);
      if (o_.json || text.empty()) return;
      if (!to_stderr) {
        Emit(text);
      } else if (isatty(2)) {
        Paint();
        std::fputs(text.c_str(), stderr);
      }
      return;
    }
    case v1::Event::kSessionRemoved:
      OnSessionRemoved(e.session_removed());
      return;
    case v1::Event::kError:
      OnError(e, now);
      return;
    case v1::Event::kAssistantMessage:
      if (!e.assistant_message().text().empty()) final_text_ = e.assistant_message().text();
      return;
    case v1::Event::kToolCallReady: {
      const v1::ToolCall& c = e.tool_call_ready().call();
      call_summary_ = absl::StrCat(c.name(), "(", ArgsSummary(c.name(), c.arguments()), ")");
      std::string text = renderer_->Render(e, now, screen_);
      if (!o_.json) Trace(text);
      return;
    }
    default: {
      // With --json the events are the output; the renderer still follows the turn.
      std::string text = renderer_->Render(e, now, screen_);
      if (!o_.json) Trace(text);
      return;
    }
  }
}

void SessionView::OnSnapshot(const v1::Event& e, absl::Time now) {
  const v1::Snapshot& s = e.snapshot();
  bool first = !got_snapshot_;
  got_snapshot_ = true;
  messages_ = s.session().message_count();
  if (restarting_) {
    restarting_ = false;
    reconnect_until_ = absl::InfiniteFuture();
    Emit(renderer_->Notice("daemon back: reattached to session " + turn_.session_id.substr(0, 8)));
  }
  if (!s.session().id().empty()) turn_.session_id = s.session().id();
  turn_.workdir = s.session().workdir();
  turn_.cwd = s.session().cwd();
  turn_.model = s.session().model();
  turn_.mode = PolicyModeName(s.session().policy());
  turn_.sandbox = s.session().sandbox();
  turn_.clients.assign(s.clients().begin(), s.clients().end());
  if (first && interactive_ && !o_.json && !switched_) Emit(HeaderLine());
  if (first && interactive_ && !o_.json && IsChildSession(s.session())) {
    Emit(renderer_->Notice(absl::StrCat("a subagent (", PrintableLine(s.session().agent()),
                                        ") of session ", s.session().parent_id().substr(0, 8), ": ",
                                        PrintableLine(s.session().title()))));
  }
  if (first && !switched_ && !o_.read_only) WarnIfWide();
  if (!o_.json) {
    if (first && show_history_) {
      Emit(HistoryWithAwayRule(e, now));
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
  turn_.running_prompt = u.text();
  bool own = u.client_name() == o_.client_name;
  if (own && !turn_.own_prompt.empty() && u.text() == turn_.own_prompt) {
    turn_.own_turn_started = true;
    final_text_.clear();
    if (std::exchange(cancel_on_start_, false)) CancelTurn();  // a signal came first
  }
  if (own && !turn_.echoed.empty() && turn_.echoed.front().text == u.text()) {
    // Shown when it was typed; a queued one is recalled where its answer starts.
    if (turn_.echoed.front().queued && !o_.json) {
      Emit(renderer_->EndLine(screen_) +
           renderer_->Notice("› " + FirstLine(EchoedPrompt(u.text(), 1))));
    }
    turn_.echoed.pop_front();
  } else if (!o_.json) {
    v1::Event shown = e;
    if (own) shown.mutable_user_message()->clear_client_name();
    shown.mutable_user_message()->set_text(EchoedPrompt(u.text()));
    Emit(renderer_->Render(shown, now, screen_));
  }
}

// Every client sees a steer at each stage, with who sent it; the sender saw its own line
// when it typed it.
void SessionView::OnSteered(const v1::Steered& s) {
  const bool own = s.client_name() == o_.client_name;
  if (own && s.stage() == v1::Steered::QUEUED) {  // now a prompt of ours: a turn to wait for
    turn_.echoed.push_back({s.text(), true});
    ++turn_.turns_waiting;
  }
  if (o_.json || !interactive_) return;
  const std::string who = own ? "your steer" : "the steer from " + s.client_name();
  const std::string text = FirstLine(EchoedPrompt(s.text(), 1));
  std::string line;
  switch (s.stage()) {
    case v1::Steered::PENDING:
      if (own) return;
      line = absl::StrCat("› ", s.client_name(), " steers: ", text);
      break;
    case v1::Steered::LANDED:
      line = absl::StrCat("↳ ", who, " reached the model: ", text);
      break;
    case v1::Steered::QUEUED:
      line = absl::StrCat("the turn ended before its next step: ", who, " runs as the next prompt");
      break;
    case v1::Steered::BLOCKED:
      Emit(renderer_->EndLine(screen_) +
           renderer_->ErrorLine(
               absl::StrCat("a UserPromptSubmit hook refused ", who, ": ", s.reason())));
      return;
    default:
      return;
  }
  EmitNotice(renderer_->EndLine(screen_) + renderer_->Notice(line));
}

void SessionView::OnClientsChanged(const v1::ClientsChanged& changed) {
  std::vector<std::string> now_clients(changed.clients().begin(), changed.clients().end());
  const std::vector<std::string>& before = turn_.clients;
  if (interactive_ && !o_.json) {
    for (const std::string& c : now_clients) {
      if (c != o_.client_name && std::find(before.begin(), before.end(), c) == before.end()) {
        EmitNotice(renderer_->Notice("· " + c + " attached"));
      }
    }
    for (const std::string& c : before) {
      if (c != o_.client_name &&
          std::find(now_clients.begin(), now_clients.end(), c) == now_clients.end()) {
        EmitNotice(renderer_->Notice("· " + c + " left"));
      }
    }
  }
  turn_.clients = std::move(now_clients);
}

void SessionView::OnTurnEnded(const v1::Event& e, absl::Time now) {
  FlushHeldNotices();
  v1::Event shown = e;
  // A one-shot says its error once, on stderr (OnOwnTurnEnded), not also on stdout.
  if (!interactive_ && e.turn_ended().outcome() == v1::TURN_OUTCOME_ERROR) {
    shown.mutable_turn_ended()->set_outcome(v1::TURN_OUTCOME_UNSPECIFIED);
  }
  std::string rendered = renderer_->Render(shown, now, screen_);
  if (!o_.json) Trace(rendered);
  if (!interactive_) {
    if (turn_.OwnTurnEnds()) {
      RememberTurnUsage(e.turn_ended().usage());  // for --usage
      OnOwnTurnEnded(e.turn_ended());
    }
    return;
  }
  if (turn_.turns_waiting > 0) --turn_.turns_waiting;
  WriteOut(attention_.Alert("finished a turn"));
  if (!o_.json) Emit(renderer_->StatusLine(turn_.Status(o_.client_name, o_.read_only)));
  SaveSeen();
}

void SessionView::OnOwnTurnEnded(const v1::TurnEnded& t) {
  exit_code_ = signal_exit_ != 0 ? signal_exit_ : ExitFor(t);
  if (exit_code_ == kExitDone && unasked_denials_ > 0) exit_code_ = kExitDenied;
  Paint();  // stdout's text before stderr's lines
  if (t.outcome() == v1::TURN_OUTCOME_ERROR) std::fprintf(stderr, "agent: %s\n", t.error().c_str());
  if (t.denied_calls() > 0 && t.outcome() == v1::TURN_OUTCOME_DONE) {
    std::fprintf(stderr, "agent: %d gated call%s denied by the policy (exit code %d)\n",
                 t.denied_calls(), t.denied_calls() == 1 ? " was" : "s were", kExitDenied);
  }
  if (o_.json) {
    WriteOut(ResultJsonLine(TurnResult{t, final_text_, turn_.session_id, exit_code_}) + "\n");
  }
  Leave("");
}

// A call the mode or a rule refused is said on stderr in a one-shot: without a terminal
// nobody was asked, and a script must not believe the change was made.
void SessionView::OnToolResult(const v1::Event& e, absl::Time now) {
  std::string text = renderer_->Render(e, now, screen_);
  if (!o_.json) Trace(text);
  const v1::ToolResult& r = e.tool_result();
  turn_.last_tool = r.name();
  turn_.last_output = r.content();
  if (interactive_ || !r.denied_by_policy()) return;
  Paint();
  std::string why = FirstLine(r.content());
  std::fprintf(stderr, "agent: denied %s: %s\n",
               call_summary_.empty() ? r.name().c_str() : call_summary_.c_str(), why.c_str());
}

void SessionView::OnSessionRemoved(const v1::SessionRemoved& r) {
  removed_ = true;
  std::string by = r.client_name().empty() ? "" : " by " + r.client_name();
  std::string what = absl::StrCat("session ", turn_.session_id.substr(0, 8), " was removed", by);
  if (!interactive_) {
    Leave("");
    std::fprintf(stderr, "agent: %s; this turn is lost\n", what.c_str());
    exit_code_ = kExitError;
    return;
  }
  Emit(renderer_->EndLine(screen_) +
       renderer_->ErrorLine(what + ". /new starts a session here, Ctrl-D leaves"));
  v1::Event idle;
  idle.mutable_turn_ended();
  Emit(renderer_->Render(idle, absl::Now(), screen_));
  turn_.turns_waiting = 0;
}

void SessionView::OnError(const v1::Event& e, absl::Time now) {
  if (interactive_) {
    std::string text = renderer_->Render(e, now, screen_);
    if (!o_.json) Emit(text);
    return;
  }
  // One-shot: on stderr only, once.
  Paint();
  std::fprintf(stderr, "agent: %s\n", e.error().message().c_str());
}

std::string SessionView::HistoryWithAwayRule(const v1::Event& e, absl::Time now) {
  auto history = ParseHistory(e.snapshot().transcript_json());
  if (!history.ok()) return renderer_->Render(e, now, screen_);
  // A huge prompt in the history is shown as it was echoed: its start.
  for (HistoryMessage& m : *history) {
    if (m.role == "user") m.content = EchoedPrompt(m.content);
  }
  std::optional<int64_t> at = AwayRuleBefore(LoadSeenMark(SeenPath()), e.epoch(), e.seq(),
                                             static_cast<int64_t>(history->size()));
  auto cut = history->begin() + at.value_or(static_cast<int64_t>(history->size()));
  std::string out =
      renderer_->RenderTranscript(std::vector<HistoryMessage>(history->begin(), cut), screen_);
  if (at.has_value()) {
    out += renderer_->EndLine(screen_) + renderer_->Notice("— while you were away —");
    out += renderer_->RenderTranscript(std::vector<HistoryMessage>(cut, history->end()), screen_);
  }
  v1::Event state = e;
  state.mutable_snapshot()->clear_transcript_json();
  return out + renderer_->Render(state, now, screen_);
}

void SessionView::CountMessages(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kUserMessage:
    case v1::Event::kAssistantMessage:
    case v1::Event::kToolResult:
      ++messages_;
      return;
    case v1::Event::kCompacted:
      messages_ = e.compacted().kept_messages();
      return;
    default:
      return;
  }
}

void SessionView::WarnIfWide() {
  const char* home = std::getenv("HOME");
  std::string warning = WideWorkdirWarning(turn_.workdir, home != nullptr ? home : "");
  if (const ProxyReply* remote = RemoteHostInfo(); remote != nullptr) {
    // HOST's paths (canonical there), never resolved against this machine's files.
    const bool wide = turn_.workdir == "/" || turn_.workdir == remote->home;
    warning = wide ? WideWorkdirWarning(turn_.workdir, turn_.workdir) : "";
  }
  if (warning.empty()) return;
  // Not in the rendered stream: --json stdout stays events only.
  if (interactive_ && !o_.json) {
    Emit(renderer_->Colored("33", "warning: " + warning) + "\n");
  } else {
    std::fprintf(stderr, "agent: warning: %s\n", warning.c_str());
  }
}

}  // namespace agent::client
