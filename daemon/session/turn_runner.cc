// TurnRunner (turn_runner.h): the turn thread, the session's side of the turn loop (TurnHost)
// and the reply as it streams; compaction is in compaction.cc. Every method here takes the
// session's lock briefly; saves are written after it is released.
#include "daemon/session/turn_runner.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/context/usage.h"
#include "daemon/llm/request_builder.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/turn.h"
#include "daemon/tools/update_plan.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

constexpr const char* kIdleMessage = "agent is waiting for your input";

std::string TitleFrom(std::string_view prompt) {
  std::string t(prompt.substr(0, std::min<size_t>(prompt.size(), 80)));
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t;
}

}  // namespace

TurnRunner::TurnRunner(Session& session) : s_(session), model_(session.deps_.make_model_client()) {}

// ---- Streaming progress from the model transport (llm::StreamSink) ------------------------------

void TurnRunner::OnText(std::string_view text) {
  SessionMutexLock l(&s_.mu_);
  s_.answered_ = true;  // the model answers: the session is kept from here on
  s_.partial_text_.append(text);
  s_.Emit(events::TextDelta(text));
}

void TurnRunner::OnReasoning(std::string_view text) {
  SessionMutexLock l(&s_.mu_);
  s_.answered_ = true;
  s_.partial_reasoning_.append(text);
  s_.Emit(events::ReasoningDelta(text));
}

void TurnRunner::OnToolCallStarted(std::string_view id, std::string_view name) {
  SessionMutexLock l(&s_.mu_);
  s_.answered_ = true;
  s_.Emit(events::ToolCallStarted(id, name));
}

void TurnRunner::OnRetry(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) {
  SessionMutexLock l(&s_.mu_);
  // What streamed before the failed attempt is discarded with it.
  s_.partial_text_.clear();
  s_.partial_reasoning_.clear();
  s_.ctx_.usage.AddRetry();
  s_.Emit(events::Retrying(attempt, max_attempts, delay_ms, reason));
}

void TurnRunner::Main() {
  s_.checkpointer();  // made (its record read) before the lock is taken
  // May read the rule files.
  if (!BeginNextTurn(s_.rules_->UntrustedRules())) return;
  for (;;) {
    int max_steps;
    std::string blocked;
    {
      SessionMutexLock l(&s_.mu_);
      max_steps = s_.turn_.max_steps;
      blocked = std::exchange(prompt_blocked_, "");
    }
    std::string error;
    v1::TurnOutcome outcome = v1::TURN_OUTCOME_ERROR;
    if (!blocked.empty()) {
      error = "a hook blocked the prompt: " + blocked;
    } else {
      outcome = Turn(this, model_.get(), &s_.cancelled_, max_steps).Run(&error);
      for (int n = 0; outcome == v1::TURN_OUTCOME_DONE && ContinueAfterStop(n); ++n) {
        outcome = Turn(this, model_.get(), &s_.cancelled_, max_steps).Run(&error);  // sent back
      }
    }
    // Before TurnEnded: an Undo that follows it finds the turn's checkpoint.
    std::vector<std::string> notices = s_.checkpointer().EndTurn(s_.NowMs());
    std::vector<std::string> untrusted = s_.rules_->UntrustedRules();  // for the next turn
    {
      SessionMutexLock l(&s_.mu_);
      SealTurnLocked(outcome);
    }  // the turn's messages are written here, before TurnEnded says how it went
    {
      SessionMutexLock l(&s_.mu_);
      for (std::string& n : notices) s_.NoticeLocked(std::move(n));
      if (s_.saver_.unsaved() && outcome != v1::TURN_OUTCOME_CANCELLED) {
        outcome = v1::TURN_OUTCOME_ERROR;
        error = absl::StrCat("the session could not be saved (", s_.saver_.last_error().message(),
                             "); it is kept in memory and saved again when the disk allows");
      }
      if (!EndTurnLocked(outcome, error)) return;
    }
    if (!BeginNextTurn(std::move(untrusted))) return;
  }
}

hooks::PromptHooks TurnRunner::PromptHooksFor(const std::string& text) {
  hooks::PromptHooks hooked = s_.hooks_->BeforePrompt(text);
  if (!hooked.context.empty()) {
    hooked.context = absl::StrCat("\n\n<hook-context>\n", hooked.context, "\n</hook-context>");
  }
  return hooked;
}

bool TurnRunner::BeginNextTurn(std::vector<std::string> untrusted_rules) {
  std::string text;
  {
    SessionMutexLock l(&s_.mu_);
    if (s_.queue_.empty() || s_.shutting_down_) {
      s_.running_ = false;
      s_.cancel_next_ = false;
      return false;
    }
    text = s_.queue_.front().text;
  }
  // Only this thread takes prompts off the queue, and only Shutdown empties it: the front is
  // still this prompt below unless the session is shutting down.
  hooks::PromptHooks hooked = PromptHooksFor(text);
  SessionMutexLock l(&s_.mu_);
  return BeginTurnLocked(std::move(untrusted_rules), std::move(hooked));
}

bool TurnRunner::BeginTurnLocked(std::vector<std::string> untrusted_rules,
                                 hooks::PromptHooks hooked) {
  if (s_.queue_.empty() || s_.shutting_down_) {
    s_.running_ = false;
    s_.cancel_next_ = false;
    return false;
  }
  Session::QueuedPrompt prompt = std::move(s_.queue_.front());
  s_.queue_.pop_front();
  s_.in_turn_ = true;
  // A cancel sent while this prompt was on its way (its hooks ran) is for this turn.
  s_.cancelled_ = std::exchange(s_.cancel_next_, false);
  s_.tally_ = events::TurnTally{"", s_.NowMs(), 0};
  v1::ClientSettings session = s_.settings_.client;
  if (session.max_steps() <= 0) session.set_max_steps(s_.settings_.max_steps);
  s_.turn_ = ResolveTurnSettings(prompt.settings, session, s_.deps_.config);
  if (s_.meta_.title.empty()) s_.meta_.title = TitleFrom(prompt.text);
  // The files as they are before the prompt's message, snapshot while the model thinks.
  s_.checkpointer().BeginTurn(static_cast<int>(s_.meta_.turns) + 1,
                              static_cast<int>(s_.transcript_.size()), prompt.text, s_.NowMs());
  // A prompt a hook blocked never reaches the model; the turn ends with the hook's reason.
  prompt_blocked_ = hooked.blocked ? hooked.reason : "";
  // Cannot fail: turns end with nothing pending.
  if (!hooked.blocked) {
    (void)s_.transcript_.AppendUser(
        ApplyExpansion(prompt.text, prompt.expansion, s_.files_) + hooked.context,
        prompt.expansion.image_urls);
  }
  ++s_.meta_.turns;
  s_.SaveLocked();
  s_.BeginTurnContextLocked();
  s_.AnnounceUntrustedRulesLocked(std::move(untrusted_rules));
  s_.Emit(events::TurnStarted(prompt.text));
  s_.Emit(events::UserMessage(prompt.text, prompt.client));
  return true;
}

void TurnRunner::SealTurnLocked(v1::TurnOutcome outcome) {
  s_.transcript_.Seal(outcome == v1::TURN_OUTCOME_CANCELLED ? "cancelled by the user"
                                                            : "the turn ended before it ran");
  // Idle: the transcript whole, its journal folded in.
  s_.SaveLocked(Session::Save::kWhole);
}

bool TurnRunner::EndTurnLocked(v1::TurnOutcome outcome, const std::string& error) {
  s_.partial_text_.clear();
  s_.partial_reasoning_.clear();
  s_.in_turn_ = false;
  if (!s_.shutting_down_) QueueUntakenSteersLocked();
  v1::Event ended = s_.TurnEndedEventLocked(outcome, error);
  events::AddTally(&ended, s_.tally_, s_.NowMs());
  s_.Emit(std::move(ended));
  // Idle in the same step as the TurnEnded event: a client that answers it with Compact
  // must find the session free, not still winding down.
  if (s_.queue_.empty() || s_.shutting_down_) {
    s_.running_ = false;
    s_.cancel_next_ = false;
    s_.DiscardIfUnansweredLocked();  // a script's prompt that got no answer, nobody attached
    return false;
  }
  return true;
}

bool TurnRunner::ContinueAfterStop(int continued) {
  std::optional<std::string> reason = s_.hooks_->OnStop(continued);
  if (!reason.has_value()) {
    s_.hooks_->Notify("idle_prompt", kIdleMessage);
    return false;
  }
  SessionMutexLock l(&s_.mu_);
  if (s_.cancelled_ || s_.shutting_down_) return false;
  // Nothing is pending after a turn the model ended, so a user message keeps the rule.
  if (!s_.transcript_.AppendUser(absl::StrCat("[Stop hook] ", *reason)).ok()) return false;
  s_.SaveLocked(Session::Save::kTranscriptOnly);
  s_.NoticeLocked(absl::StrCat("a Stop hook sent the model back to work: ", *reason));
  return true;
}

llm::ModelRequest TurnRunner::BuildRequestLocked() {
  llm::ModelRequest req;
  req.settings = s_.settings_.model;
  // The cached wire text, not a copy of the transcript; a bad provider is reported when the
  // request is built for the wire, from the plain messages.
  if (absl::StatusOr<llm::Provider> provider = llm::ParseProvider(s_.settings_.model.provider);
      provider.ok()) {
    req.prepared = std::make_shared<const llm::PreparedMessages>(request_cache_.Prepare(
        s_.transcript_, *provider, llm::OpenAiOptionsFor(s_.settings_.model)));
  } else {
    req.messages = s_.transcript_.messages();
  }
  req.cache_key = s_.id_;  // one prompt cache per session (OpenAI prompt_cache_key)
  req.connect_timeout_ms = s_.turn_.connect_timeout_ms;
  req.idle_timeout_ms = s_.turn_.idle_timeout_ms;
  req.max_attempts = s_.turn_.max_attempts;
  return req;
}

// ---- The transcript (TurnHost) ------------------------------------------------------------------

absl::StatusOr<llm::ModelRequest> TurnRunner::NextRequest(const tools::ToolRegistry& tools) {
  SessionMutexLock l(&s_.mu_);
  // Every mutation of a Transcript keeps the rule (debug builds re-check it whole after
  // each), so a step only needs nothing pending: a walk of the whole transcript per step
  // would make a long session's every request linear in its length.
#ifndef NDEBUG
  absl::Status valid = s_.transcript_.ValidateForRequest();
#else
  absl::Status valid = s_.transcript_.HasPending()
                           ? absl::FailedPreconditionError("tool calls are pending")
                           : absl::OkStatus();
#endif
  if (!valid.ok()) {
    return absl::InternalError(
        absl::StrCat("internal error, transcript invalid: ", valid.message()));
  }
  s_.partial_text_.clear();
  s_.partial_reasoning_.clear();
  llm::ModelRequest req = BuildRequestLocked();
  v1::Event left_out;  // tools over the cap, told when that changes
  req.tools = tool_offer_.Arrange(tools.Schemas(), left_out.mutable_notice()->mutable_text());
  if (!left_out.notice().text().empty()) s_.Emit(std::move(left_out));
  return req;
}

void TurnRunner::LandSteers() {
  std::deque<Session::QueuedPrompt> steers;
  {
    SessionMutexLock l(&s_.mu_);
    if (s_.steers_.empty() || s_.cancelled_) return;
    steers.swap(s_.steers_);
  }
  // A steer is a prompt: the same UserPromptSubmit hooks, run without the lock.
  std::vector<hooks::PromptHooks> hooked;
  for (const Session::QueuedPrompt& p : steers) hooked.push_back(PromptHooksFor(p.text));
  SessionMutexLock l(&s_.mu_);
  bool landed = false;
  std::vector<Session::QueuedPrompt> kept;
  for (size_t i = 0; i < steers.size(); ++i) {
    Session::QueuedPrompt& p = steers[i];
    if (hooked[i].blocked) {
      s_.Emit(events::Steered(p.text, p.client, v1::Steered::BLOCKED, hooked[i].reason));
      continue;
    }
    // Nothing is pending between steps (Turn::Step), so this cannot break the rule.
    if (!s_.transcript_
             .AppendUser(ApplyExpansion(p.text, p.expansion, s_.files_) + hooked[i].context,
                         p.expansion.image_urls)
             .ok()) {
      kept.push_back(std::move(p));  // before the steers that came during the hooks
      continue;
    }
    landed = true;
    s_.Emit(events::Steered(p.text, p.client, v1::Steered::LANDED));
  }
  s_.steers_.insert(s_.steers_.begin(), std::make_move_iterator(kept.begin()),
                    std::make_move_iterator(kept.end()));
  if (landed) s_.SaveLocked(Session::Save::kTranscriptOnly);
}

void TurnRunner::QueueUntakenSteersLocked() {
  for (const Session::QueuedPrompt& p : s_.steers_) {
    s_.Emit(events::Steered(p.text, p.client, v1::Steered::QUEUED));
  }
  s_.queue_.insert(s_.queue_.begin(), std::make_move_iterator(s_.steers_.begin()),
                   std::make_move_iterator(s_.steers_.end()));
  s_.steers_.clear();
}

void TurnRunner::KeepStreamedText() {
  SessionMutexLock l(&s_.mu_);
  if (s_.partial_text_.empty()) return;
  (void)s_.transcript_.AppendAssistant({{"content", s_.partial_text_}});
  s_.SaveLocked(Session::Save::kTranscriptOnly);
}

absl::Status TurnRunner::AppendReply(const llm::ModelReply& reply) {
  SessionMutexLock l(&s_.mu_);
  if (auto s = s_.transcript_.AppendAssistant(llm::AssistantMessageFromReply(reply)); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model's reply was malformed: ", s.message()));
  }
  s_.partial_text_.clear();
  s_.partial_reasoning_.clear();
  s_.answered_ = true;
  s_.meta_.tool_calls += static_cast<int64_t>(reply.tool_calls.size());
  RecordUsageLocked(reply);
  s_.SaveLocked(Session::Save::kTranscriptOnly);
  s_.Emit(events::AssistantMessage(reply));
  return absl::OkStatus();
}

bool TurnRunner::ShouldCompact() {
  SessionMutexLock l(&s_.mu_);
  const int64_t at_chars = s_.turn_.compact_at_chars;
  const int64_t context_tokens = s_.turn_.context_tokens;
  if (at_chars > 0 && static_cast<int64_t>(s_.transcript_.CharCount()) > at_chars) return true;
  return context_tokens > 0 && s_.meta_.prompt_tokens > context_tokens * 8 / 10;
}

std::shared_ptr<const tools::ToolRegistry> TurnRunner::StepTools() {
  if (!s_.deps_.tools_for)
    return std::shared_ptr<const tools::ToolRegistry>(s_.deps_.tools, [](auto*) {});
  std::shared_ptr<const tools::ToolRegistry> tools =
      s_.deps_.tools_for(s_.workdir_, s_.id_, &s_.cancelled_, [this](const std::string& m) {
        SessionMutexLock l(&s_.mu_);
        s_.Emit(events::Error(m));
      });
  if (tools) return tools;
  return std::shared_ptr<const tools::ToolRegistry>(s_.deps_.tools, [](auto*) {});
}

// ---- Tool calls (TurnHost) ---------------------------------------------------------------------

void TurnRunner::CallReady(const llm::ToolCall& call) {
  SessionMutexLock l(&s_.mu_);
  s_.Emit(events::ToolCallReady(call));
}

std::optional<tools::ToolOutcome> TurnRunner::Authorize(const llm::ToolCall& call,
                                                        const Json& args) {
  return s_.guard_->Authorize(call, args);
}

std::optional<tools::ToolOutcome> TurnRunner::BeforeTool(const llm::ToolCall& call,
                                                         const tools::Tool& tool, Json* args) {
  return s_.guard_->Before(call, tool, args);
}

void TurnRunner::AfterTool(const llm::ToolCall& call, const Json& args,
                           tools::ToolOutcome* outcome) {
  s_.guard_->After(call, args, outcome);
}

tools::ToolContext TurnRunner::MakeToolContext(const std::string& call_id) {
  s_.checkpointer().BeforeTool();  // no tool touches a file before the turn's checkpoint exists
  tools::ToolContext ctx;
  ctx.call_id = call_id;
  ctx.workdir = s_.workdir_;
  ctx.files = &s_.files_;
  ctx.cancelled = &s_.cancelled_;
  ctx.sandbox = s_.deps_.sandbox.get();
  ctx.jobs = &s_.jobs_;
  std::string cwd;
  {
    SessionMutexLock l(&s_.mu_);
    cwd = s_.meta_.cwd;
    ctx.default_timeout_s = s_.turn_.bash_timeout_s;
    ctx.env = s_.settings_.tool_env;
  }
  // Checked again at each use: the directory may be gone, and a loaded meta file is
  // repository content.
  ctx.cwd = DirectoryInside(s_.workdir_, cwd);
  ctx.on_output = [this, call_id](std::string_view chunk, bool is_stderr) {
    SessionMutexLock l(&s_.mu_);
    s_.Emit(events::ToolOutput(call_id, chunk, is_stderr));
  };
  ctx.editor_text = [this](const std::string& path) -> std::optional<std::string> {
    // To the first editor attached, directly: the question is not session history.
    auto send = [this](const v1::Event& e) {
      SessionMutexLock l(&s_.mu_);
      return s_.audience_.AskEditor(e);
    };
    return s_.editor_text_.Ask(path, send, &s_.cancelled_);
  };
  return ctx;
}

void TurnRunner::AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                               const std::vector<tools::ToolOutcome>& outcomes) {
  SessionMutexLock l(&s_.mu_);
  for (size_t k = 0; k < outcomes.size(); ++k) {
    const llm::ToolCall& call = calls[first + k];
    auto diff = unasked_diffs_.extract(call.id);
    std::string content = outcomes[k].content;
    // The tool only knows it was cancelled; the model should know why.
    if (s_.shutting_down_ && s_.cancelled_) content += "\n[interrupted: the daemon was stopping]";
    if (auto s = s_.transcript_.AppendToolResult(call.id, content); !s.ok()) continue;
    if (outcomes[k].denied_by_policy) ++s_.tally_.denied_calls;
    v1::Event result =
        events::ToolResult(call, content, outcomes[k].is_error, outcomes[k].denied_by_policy);
    if (!diff.empty() && !outcomes[k].is_error) {
      result.mutable_tool_result()->set_diff(std::move(diff.mapped()));
    }
    s_.Emit(std::move(result));
    if (call.name == tools::kUpdatePlanTool && !outcomes[k].is_error) RecordPlanLocked(call);
  }
  // One save for the batch: a reply of thousands of calls is not thousands of writes.
  s_.SaveLocked(Session::Save::kTranscriptOnly);
}

void TurnRunner::RecordUsageLocked(const llm::ModelReply& reply) {
  double cost = 0;
  if (reply.usage.has_value()) {
    cost = s_.ctx_.prices.Cost(s_.settings_.model.model, *reply.usage);
    s_.meta_.prompt_tokens = reply.usage->prompt_tokens;
    s_.meta_.completion_tokens += reply.usage->completion_tokens;
    s_.ctx_.reported_tokens = reply.usage->prompt_tokens + reply.usage->completion_tokens;
    s_.ctx_.reported_messages = s_.transcript_.size();
    s_.Emit(context::UsageEvent(*reply.usage, cost));
  }
  s_.ctx_.usage.AddRequest(reply.usage, cost);
}

void TurnRunner::RecordPlanLocked(const llm::ToolCall& call) {
  auto args = ParseJson(call.arguments);
  if (!args.ok()) return;
  auto plan = tools::NormalizePlan(*args);
  if (!plan.ok()) return;  // the tool told the model what was wrong
  s_.ctx_.plan = context::PlanFromJson(*plan);
  v1::Event e;
  *e.mutable_plan_updated() = *s_.ctx_.plan;
  s_.Emit(std::move(e));
}

}  // namespace agent::daemon
