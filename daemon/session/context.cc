// Session's share of the project context (daemon/context/): the system message and its
// instruction files, the plan, usage and cost, and the /context report. The hooks in
// session.cc and turn_thread.cc call these; all run under the session's mutex except the
// public queries, which take it.
#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/context/context_report.h"
#include "daemon/context/first_use.h"
#include "daemon/legacy_sessions.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"
#include "daemon/tools/update_plan.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

v1::Event NoticeEvent(std::string text) {
  v1::Event e;
  e.mutable_notice()->set_text(std::move(text));
  return e;
}

}  // namespace

BuiltSystemPrompt Session::BuildPrompt(const std::string& workdir, const std::string& cwd,
                                       const Clock& clock) {
  return BuildSystemPromptFor(workdir, cwd, clock.Now());
}

bool Session::MarkInstructionsSeen(const std::string& workdir, const BuiltSystemPrompt& prompt) {
  return context::MarkInstructionsSeen(StateDir() + "/instructions_seen.json", workdir,
                                       prompt.instructions);
}

void Session::InitContextLocked(const BuiltSystemPrompt& prompt, context::PriceTable prices,
                                bool instructions_changed) {
  ctx_.SetPrompt(prompt.instructions, prompt.base_chars, prompt.text.size());
  ctx_.prices = std::move(prices);
  std::string notice;
  if (instructions_changed) {
    notice = context::InstructionsNotice(prompt.instructions);
  } else if (!prompt.instructions.cut_note.empty()) {
    notice = prompt.instructions.cut_note;
  }
  if (!prompt.problem.empty()) absl::StrAppend(&notice, notice.empty() ? "" : "\n", prompt.problem);
  if (std::string moved = TakeMigrationNote(workdir_); !moved.empty()) {
    absl::StrAppend(&notice, notice.empty() ? "" : "\n", moved);
  }
  if (std::string why = sandbox::SandboxNotice(deps_.sandbox.get()); !why.empty()) {
    absl::StrAppend(&notice, notice.empty() ? "" : "\n", why);  // never a silent fallback
  }
  ctx_.pending_notice = std::move(notice);
}

void Session::LoadContextLocked(bool forked, context::PriceTable prices) {
  ctx_.LoadJson(meta_.context);
  ctx_.prices = std::move(prices);
  if (forked) ctx_.usage = context::UsageMeter();  // a fork's own use starts at zero
  if (std::string moved = TakeMigrationNote(workdir_); !moved.empty()) {  // legacy_sessions.h
    absl::StrAppend(&ctx_.pending_notice, ctx_.pending_notice.empty() ? "" : "\n", moved);
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

void Session::RecordUsageLocked(const llm::ModelReply& reply) {
  double cost = 0;
  if (reply.usage.has_value()) {
    cost = ctx_.prices.Cost(settings_.model.model, *reply.usage);
    meta_.prompt_tokens = reply.usage->prompt_tokens;
    meta_.completion_tokens += reply.usage->completion_tokens;
    ctx_.reported_tokens = reply.usage->prompt_tokens + reply.usage->completion_tokens;
    ctx_.reported_messages = transcript_.size();
    Emit(context::UsageEvent(*reply.usage, cost));
  }
  ctx_.usage.AddRequest(reply.usage, cost);
}

void Session::RecordRetryLocked() { ctx_.usage.AddRetry(); }

void Session::RecordPlanLocked(const llm::ToolCall& call) {
  auto args = ParseJson(call.arguments);
  if (!args.ok()) return;
  auto plan = tools::NormalizePlan(*args);
  if (!plan.ok()) return;  // the tool told the model what was wrong
  ctx_.plan = context::PlanFromJson(*plan);
  v1::Event e;
  *e.mutable_plan_updated() = *ctx_.plan;
  Emit(std::move(e));
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
