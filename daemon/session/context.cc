// Session's share of the project context (daemon/context/): the system message and its
// instruction files, usage and cost, and the /context report. The session's constructor and
// its TurnRunner call these; all run under the session's mutex except the public queries,
// which take it.
#include "absl/strings/str_cat.h"
#include "daemon/context/context_report.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

v1::Event NoticeEvent(std::string text) {
  v1::Event e;
  e.mutable_notice()->set_text(std::move(text));
  return e;
}

}  // namespace

void Session::OpenContextLocked(Opening& o) {
  if (o.kind == Opening::Kind::kNew) {
    ctx_.SetPrompt(o.prompt.instructions, o.prompt.base_chars, o.prompt.text.size());
  } else {
    ctx_.LoadJson(meta_.context);
    if (o.kind == Opening::Kind::kForked) ctx_.usage = context::UsageMeter();  // its own use
  }
  ctx_.prices = std::move(o.prices);
  if (!o.notice.empty()) {
    absl::StrAppend(&ctx_.pending_notice, ctx_.pending_notice.empty() ? "" : "\n", o.notice);
  }
}

void Session::BeginTurnContextLocked() {
  ctx_.usage.BeginTurn();
  if (!ctx_.pending_notice.empty()) Emit(NoticeEvent(std::exchange(ctx_.pending_notice, "")));
}

v1::Event Session::TurnEndedEventLocked(v1::TurnOutcome outcome, const std::string& error) {
  v1::Event e = events::TurnEnded(outcome, error);
  *e.mutable_turn_ended()->mutable_usage() = ctx_.usage.turn();
  return e;
}

void Session::RefreshSystemPromptLocked(const BuiltSystemPrompt& prompt, bool changed_since_seen) {
  if (!meta_.agent.empty()) return;  // a child keeps its agent definition's prompt
  if (!transcript_.ReplaceSystemText(prompt.text).ok()) return;
  ctx_.SetPrompt(prompt.instructions, prompt.base_chars, prompt.text.size());
  ctx_.reported_tokens = 0;
  // A file changed since (the model may have edited it) is shown again, as new ones are.
  if (changed_since_seen) Emit(NoticeEvent(context::InstructionsNotice(prompt.instructions)));
}

std::vector<v1::InstructionFile> Session::InstructionFiles() const {
  SessionMutexLock l(&mu_);
  return ctx_.instructions;
}

v1::ContextReport Session::ContextReport() const {
  SessionMutexLock l(&mu_);
  return context::BuildContextReport(ctx_, transcript_.messages(), deps_.tools->Schemas(),
                                     deps_.config.context_tokens);
}

}  // namespace agent::daemon
