// SessionState (session_state.h): what a turn changes of the session, in the order a turn
// changes it: the prompt taken, the reply streaming in and landing, the steers, the results,
// an approval, the end. The turn thread (TurnRunner) is the only caller of these.
#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/context/usage.h"
#include "daemon/llm/request_builder.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/session_state.h"
#include "daemon/tools/update_plan.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

std::string TitleFrom(std::string_view prompt) {
  std::string t(prompt.substr(0, std::min<size_t>(prompt.size(), 80)));
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t;
}

}  // namespace

// ---- The prompt ---------------------------------------------------------------------------------

void SessionState::StopRunningLocked() {
  running_ = false;
  cancel_next_ = false;
}

std::optional<std::string> SessionState::NextPromptText() {
  SessionMutexLock l(&mu_);
  if (queue_.empty() || shutting_down_) {
    StopRunningLocked();
    return std::nullopt;
  }
  return queue_.front().text;
}

bool SessionState::BeginTurn(
    std::vector<std::string> untrusted_rules, hooks::PromptHooks hooked, tools::FileTracker& files,
    const std::function<void(int, int, const std::string&)>& begin_checkpoint) {
  {
    SessionMutexLock l(&mu_);
    // Only the turn thread takes prompts off the queue, and only StopTurns empties it: the
    // front is still the prompt NextPromptText gave unless the session is shutting down.
    if (queue_.empty() || shutting_down_) {
      StopRunningLocked();
      return false;
    }
    QueuedPrompt prompt = std::move(queue_.front());
    queue_.pop_front();
    in_turn_ = true;
    // A cancel sent while this prompt was on its way (its hooks ran) is for this turn.
    cancelled_ = std::exchange(cancel_next_, false);
    tally_ = events::TurnTally{"", NowMs(), 0};
    v1::ClientSettings session = settings_.client;
    if (session.max_steps() <= 0) session.set_max_steps(settings_.max_steps);
    turn_ = ResolveTurnSettings(prompt.settings, session, *config_);
    if (meta_.title.empty()) meta_.title = TitleFrom(prompt.text);
    // The files as they are before the prompt's message, snapshot while the model thinks.
    begin_checkpoint(static_cast<int>(meta_.turns) + 1, static_cast<int>(transcript_.size()),
                     prompt.text);
    // A prompt a hook blocked never reaches the model; the turn ends with the hook's reason.
    prompt_blocked_ = hooked.blocked ? hooked.reason : "";
    // Cannot fail: turns end with nothing pending.
    if (!hooked.blocked) {
      (void)transcript_.AppendUser(
          ApplyExpansion(prompt.text, prompt.expansion, files) + hooked.context,
          prompt.expansion.image_urls);
    }
    ++meta_.turns;
    SaveLocked();
    ctx_.usage.BeginTurn();
    if (!ctx_.pending_notice.empty()) NoticeLocked(std::exchange(ctx_.pending_notice, ""));
    AnnounceUntrustedRulesLocked(std::move(untrusted_rules));
    Emit(events::TurnStarted(prompt.text));
    Emit(events::UserMessage(prompt.text, prompt.client));
  }
  WriteSaves();
  return true;
}

SessionState::TurnStart SessionState::TakeTurnStart() {
  SessionMutexLock l(&mu_);
  return {turn_.max_steps, std::exchange(prompt_blocked_, "")};
}

SessionState::ToolSettings SessionState::tool_settings() const {
  SessionMutexLock l(&mu_);
  return {meta_.cwd, turn_.bash_timeout_s, settings_.tool_env};
}

// ---- The reply as it streams ------------------------------------------------------------------

void SessionState::StreamText(std::string_view text) {
  SessionMutexLock l(&mu_);
  answered_ = true;  // the model answers: the session is kept from here on
  partial_text_.append(text);
  Emit(events::TextDelta(text));
}

void SessionState::StreamReasoning(std::string_view text) {
  SessionMutexLock l(&mu_);
  answered_ = true;
  partial_reasoning_.append(text);
  Emit(events::ReasoningDelta(text));
}

void SessionState::CallStarted(std::string_view id, std::string_view name) {
  SessionMutexLock l(&mu_);
  answered_ = true;
  Emit(events::ToolCallStarted(id, name));
}

void SessionState::Retrying(int attempt, int max_attempts, int64_t delay_ms,
                            std::string_view reason) {
  SessionMutexLock l(&mu_);
  // What streamed before the failed attempt is discarded with it.
  partial_text_.clear();
  partial_reasoning_.clear();
  ctx_.usage.AddRetry();
  Emit(events::Retrying(attempt, max_attempts, delay_ms, reason));
}

// ---- Steps ------------------------------------------------------------------------------------

std::deque<QueuedPrompt> SessionState::TakeSteers() {
  std::deque<QueuedPrompt> steers;
  SessionMutexLock l(&mu_);
  if (!cancelled_) steers.swap(steers_);
  return steers;
}

void SessionState::LandSteers(std::deque<QueuedPrompt> steers,
                              const std::vector<hooks::PromptHooks>& hooked,
                              tools::FileTracker& files) {
  if (steers.empty()) return;
  bool landed = false;
  {
    SessionMutexLock l(&mu_);
    std::vector<QueuedPrompt> kept;
    for (size_t i = 0; i < steers.size(); ++i) {
      QueuedPrompt& p = steers[i];
      if (hooked[i].blocked) {
        Emit(events::Steered(p.text, p.client, v1::Steered::BLOCKED, hooked[i].reason));
        continue;
      }
      // Nothing is pending between steps (Turn::Step), so this cannot break the rule.
      if (!transcript_
               .AppendUser(ApplyExpansion(p.text, p.expansion, files) + hooked[i].context,
                           p.expansion.image_urls)
               .ok()) {
        kept.push_back(std::move(p));  // before the steers that came during the hooks
        continue;
      }
      landed = true;
      Emit(events::Steered(p.text, p.client, v1::Steered::LANDED));
    }
    steers_.insert(steers_.begin(), std::make_move_iterator(kept.begin()),
                   std::make_move_iterator(kept.end()));
    if (landed) SaveLocked(Save::kTranscriptOnly);
  }
  if (landed) WriteSaves();
}

llm::ModelRequest SessionState::BuildRequestLocked() {
  llm::ModelRequest req;
  req.settings = settings_.model;
  // The cached wire text, not a copy of the transcript; a bad provider is reported when the
  // request is built for the wire, from the plain messages.
  if (absl::StatusOr<llm::Provider> provider = llm::ParseProvider(settings_.model.provider);
      provider.ok()) {
    req.prepared = std::make_shared<const llm::PreparedMessages>(
        request_cache_.Prepare(transcript_, *provider, llm::OpenAiOptionsFor(settings_.model)));
  } else {
    req.messages = transcript_.messages();
  }
  req.cache_key = id_;  // one prompt cache per session (OpenAI prompt_cache_key)
  req.connect_timeout_ms = turn_.connect_timeout_ms;
  req.idle_timeout_ms = turn_.idle_timeout_ms;
  req.max_attempts = turn_.max_attempts;
  return req;
}

absl::StatusOr<llm::ModelRequest> SessionState::NextRequest(const tools::ToolRegistry& tools) {
  SessionMutexLock l(&mu_);
  // Every mutation of a Transcript keeps the rule (debug builds re-check it whole after
  // each), so a step only needs nothing pending: a walk of the whole transcript per step
  // would make a long session's every request linear in its length.
#ifndef NDEBUG
  absl::Status valid = transcript_.ValidateForRequest();
#else
  absl::Status valid = transcript_.HasPending()
                           ? absl::FailedPreconditionError("tool calls are pending")
                           : absl::OkStatus();
#endif
  if (!valid.ok()) {
    return absl::InternalError(
        absl::StrCat("internal error, transcript invalid: ", valid.message()));
  }
  partial_text_.clear();
  partial_reasoning_.clear();
  llm::ModelRequest req = BuildRequestLocked();
  v1::Event left_out;  // tools over the cap, told when that changes
  req.tools = tool_offer_.Arrange(tools.Schemas(), left_out.mutable_notice()->mutable_text());
  if (!left_out.notice().text().empty()) Emit(std::move(left_out));
  return req;
}

void SessionState::KeepStreamedText() {
  {
    SessionMutexLock l(&mu_);
    if (partial_text_.empty()) return;
    (void)transcript_.AppendAssistant({{"content", partial_text_}});
    SaveLocked(Save::kTranscriptOnly);
  }
  WriteSaves();
}

absl::Status SessionState::AppendReply(const llm::ModelReply& reply) {
  {
    SessionMutexLock l(&mu_);
    if (auto s = transcript_.AppendAssistant(llm::AssistantMessageFromReply(reply)); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model's reply was malformed: ", s.message()));
    }
    partial_text_.clear();
    partial_reasoning_.clear();
    answered_ = true;
    meta_.tool_calls += static_cast<int64_t>(reply.tool_calls.size());
    RecordUsageLocked(reply);
    SaveLocked(Save::kTranscriptOnly);
    Emit(events::AssistantMessage(reply));
  }
  WriteSaves();  // the calls are on disk before any of them runs
  return absl::OkStatus();
}

void SessionState::RecordUsageLocked(const llm::ModelReply& reply) {
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

void SessionState::RememberDiff(const std::string& call_id, std::string diff) {
  SessionMutexLock l(&mu_);
  unasked_diffs_[call_id] = std::move(diff);
}

void SessionState::AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                                 const std::vector<tools::ToolOutcome>& outcomes) {
  {
    SessionMutexLock l(&mu_);
    for (size_t k = 0; k < outcomes.size(); ++k) {
      const llm::ToolCall& call = calls[first + k];
      auto diff = unasked_diffs_.extract(call.id);
      std::string content = outcomes[k].content;
      // The tool only knows it was cancelled; the model should know why.
      if (shutting_down_ && cancelled_) content += "\n[interrupted: the daemon was stopping]";
      if (auto s = transcript_.AppendToolResult(call.id, content); !s.ok()) continue;
      if (outcomes[k].denied_by_policy) ++tally_.denied_calls;
      v1::Event result =
          events::ToolResult(call, content, outcomes[k].is_error, outcomes[k].denied_by_policy);
      if (!diff.empty() && !outcomes[k].is_error) {
        result.mutable_tool_result()->set_diff(std::move(diff.mapped()));
      }
      Emit(std::move(result));
      if (call.name == tools::kUpdatePlanTool && !outcomes[k].is_error) RecordPlanLocked(call);
    }
    // One save for the batch: a reply of thousands of calls is not thousands of writes.
    SaveLocked(Save::kTranscriptOnly);
  }
  WriteSaves();
}

void SessionState::RecordPlanLocked(const llm::ToolCall& call) {
  auto args = ParseJson(call.arguments);
  if (!args.ok()) return;
  auto plan = tools::NormalizePlan(*args);
  if (!plan.ok()) return;  // the tool told the model what was wrong
  ctx_.plan = context::PlanFromJson(*plan);
  v1::Event e;
  *e.mutable_plan_updated() = *ctx_.plan;
  Emit(std::move(e));
}

void SessionState::ShowPlan(const std::string& markdown) {
  Json steps = Json::array();
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    size_t digits = 0;
    while (digits < line.size() && absl::ascii_isdigit(line[digits])) ++digits;
    absl::string_view item;
    if (digits > 0 && absl::StartsWith(line.substr(digits), ". ")) {
      item = line.substr(digits + 2);
    } else if (absl::StartsWith(line, "- ") || absl::StartsWith(line, "* ")) {
      item = line.substr(2);
    } else {
      continue;
    }
    if (!item.empty()) steps.push_back({{"step", std::string(item)}, {"status", "pending"}});
  }
  if (steps.empty()) return;  // prose only: the question shows it
  absl::StatusOr<Json> plan = tools::NormalizePlan({{"plan", std::move(steps)}});
  if (!plan.ok()) return;  // over update_plan's limits: the question still shows it whole
  SessionMutexLock l(&mu_);
  ctx_.plan = context::PlanFromJson(*plan);
  v1::Event e;
  *e.mutable_plan_updated() = *ctx_.plan;
  Emit(std::move(e));
}

bool SessionState::ShouldCompact() const {
  SessionMutexLock l(&mu_);
  const int64_t at_chars = turn_.compact_at_chars;
  const int64_t context_tokens = turn_.context_tokens;
  if (at_chars > 0 && static_cast<int64_t>(transcript_.CharCount()) > at_chars) return true;
  return context_tokens > 0 && meta_.prompt_tokens > context_tokens * 8 / 10;
}

std::optional<ApprovalGate::Answer> SessionState::Ask(const v1::PendingApproval& approval) {
  SessionMutexLock l(&mu_);
  gate_.Open(approval);
  Emit(events::ApprovalRequested(approval));
  StartDeferredWritesLocked();  // the clients must see the request before the thread sleeps
  std::optional<ApprovalGate::Answer> answer = gate_.Await(&mu_, cancelled_);
  if (!answer.has_value()) {
    Emit(events::ApprovalResolved(approval.call_id(), v1::DECISION_DENY, "", "cancelled", {}));
    return std::nullopt;
  }
  Emit(events::ApprovalResolved(approval.call_id(), answer->decision, answer->client,
                                answer->reason, answer->rules));
  return answer;
}

// ---- The end ----------------------------------------------------------------------------------

bool SessionState::SendBackToWork(const std::string& reason) {
  {
    SessionMutexLock l(&mu_);
    if (cancelled_ || shutting_down_) return false;
    // Nothing is pending after a turn the model ended, so a user message keeps the rule.
    if (!transcript_.AppendUser(absl::StrCat("[Stop hook] ", reason)).ok()) return false;
    SaveLocked(Save::kTranscriptOnly);
    NoticeLocked(absl::StrCat("a Stop hook sent the model back to work: ", reason));
  }
  WriteSaves();
  return true;
}

void SessionState::SealTurn(v1::TurnOutcome outcome) {
  {
    SessionMutexLock l(&mu_);
    transcript_.Seal(outcome == v1::TURN_OUTCOME_CANCELLED ? "cancelled by the user"
                                                           : "the turn ended before it ran");
    // Idle: the transcript whole, its journal folded in.
    SaveLocked(Save::kWhole);
  }
  WriteSaves();  // before TurnEnded says how the turn went
}

void SessionState::QueueUntakenSteersLocked() {
  for (const QueuedPrompt& p : steers_) {
    Emit(events::Steered(p.text, p.client, v1::Steered::QUEUED));
  }
  queue_.insert(queue_.begin(), std::make_move_iterator(steers_.begin()),
                std::make_move_iterator(steers_.end()));
  steers_.clear();
}

bool SessionState::EndTurn(v1::TurnOutcome outcome, std::string error,
                           std::vector<std::string> notices) {
  bool more;
  bool dropped = false;
  {
    SessionMutexLock l(&mu_);
    for (std::string& n : notices) NoticeLocked(std::move(n));
    if (saver_.unsaved() && outcome != v1::TURN_OUTCOME_CANCELLED) {
      outcome = v1::TURN_OUTCOME_ERROR;
      error = absl::StrCat("the session could not be saved (", saver_.last_error().message(),
                           "); it is kept in memory and saved again when the disk allows");
    }
    partial_text_.clear();
    partial_reasoning_.clear();
    in_turn_ = false;
    if (!shutting_down_) QueueUntakenSteersLocked();
    v1::Event ended = events::TurnEnded(outcome, error);
    *ended.mutable_turn_ended()->mutable_usage() = ctx_.usage.turn();
    events::AddTally(&ended, tally_, NowMs());
    Emit(std::move(ended));
    // Idle in the same step as the TurnEnded event: a client that answers it with Compact
    // must find the session free, not still winding down.
    more = !queue_.empty() && !shutting_down_;
    if (!more) {
      StopRunningLocked();
      DiscardIfUnansweredLocked();  // a script's prompt that got no answer, nobody attached
      dropped = discarded_;
    }
  }
  // Once running_ is false a prompt may start the next turn thread, which joins this one under
  // the mutex: this thread must not take it again, and a save's report takes it (OnSaveResult).
  // What is still queued (a meta file a failed write left) goes with the next save; only a
  // discarded session's files are deleted here, and a discarded session starts no thread.
  if (dropped) WriteSaves();
  return more;
}

}  // namespace agent::daemon
