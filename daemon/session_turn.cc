// The turn loop of a Session: it takes queued prompts one at a time and answers each with
// model requests and tool calls until the model stops calling tools, the step limit is hit, a
// cancel arrives or a request fails. Runs on the session's turn thread.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/compactor.h"
#include "daemon/deferred_writes.h"
#include "daemon/llm/request_builder.h"
#include "daemon/session.h"
#include "daemon/session_events.h"
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

// Forwards streaming progress from the model transport into events.
class Session::TurnSink : public llm::StreamSink {
 public:
  explicit TurnSink(Session* s) : s_(s) {}
  void OnText(std::string_view text) override {
    SessionMutexLock l(&s_->mu_);
    s_->answered_ = true;  // the model answers: the session is kept from here on
    s_->partial_text_.append(text);
    s_->Emit(events::TextDelta(text));
  }
  void OnReasoning(std::string_view text) override {
    SessionMutexLock l(&s_->mu_);
    s_->answered_ = true;
    s_->partial_reasoning_.append(text);
    s_->Emit(events::ReasoningDelta(text));
  }
  void OnToolCallStarted(std::string_view id, std::string_view name) override {
    SessionMutexLock l(&s_->mu_);
    s_->answered_ = true;
    s_->Emit(events::ToolCallStarted(id, name));
  }
  void OnRetry(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) override {
    SessionMutexLock l(&s_->mu_);
    // What streamed before the failed attempt is discarded with it.
    s_->partial_text_.clear();
    s_->partial_reasoning_.clear();
    s_->RecordRetryLocked();
    s_->Emit(events::Retrying(attempt, max_attempts, delay_ms, reason));
  }

 private:
  Session* s_;
};

void Session::StartTurnThreadLocked() {
  if (running_) return;
  // The previous turn thread has finished: running_ is false only after its last lock.
  if (turn_thread_.joinable()) turn_thread_.join();
  running_ = true;
  turn_thread_ = std::thread([this] { TurnThreadMain(); });
}

void Session::TurnThreadMain() {
  {
    SessionMutexLock l(&mu_);
    if (!BeginTurnLocked()) return;
  }
  for (;;) {
    std::string error;
    v1::TurnOutcome outcome = RunTurn(&error);
    for (int n = 0; outcome == v1::TURN_OUTCOME_DONE && ContinueAfterStop(n); ++n) {
      outcome = RunTurn(&error);  // a Stop hook sent the model back to work
    }
    // Before TurnEnded: an Undo that follows it finds the turn's checkpoint.
    std::vector<std::string> notices = checkpointer().EndTurn(NowMs());
    SessionMutexLock l(&mu_);
    for (std::string& n : notices) NoticeLocked(std::move(n));
    if (!EndTurnLocked(outcome, error) || !BeginTurnLocked()) return;
  }
}

bool Session::BeginTurnLocked() {
  if (queue_.empty() || shutting_down_) {
    running_ = false;
    return false;
  }
  QueuedPrompt prompt = std::move(queue_.front());
  queue_.pop_front();
  in_turn_ = true;
  cancelled_ = false;
  tally_ = events::TurnTally{"", NowMs(), 0};
  v1::ClientSettings session = settings_.client;
  if (session.max_steps() <= 0) session.set_max_steps(settings_.max_steps);
  turn_ = ResolveTurnSettings(prompt.settings, session, deps_.config);
  if (meta_.title.empty()) meta_.title = TitleFrom(prompt.text);
  // The files as they are before the prompt's message, snapshot while the model thinks.
  checkpointer().BeginTurn(static_cast<int>(meta_.turns) + 1, static_cast<int>(transcript_.size()),
                           prompt.text, NowMs());
  hooks::PromptHooks hooked = PromptHooksLocked(prompt.text);  // releases mu_ meanwhile
  prompt_blocked_ = hooked.blocked ? hooked.reason : "";
  // Cannot fail: turns end with nothing pending.
  if (!hooked.blocked) {
    (void)transcript_.AppendUser(ApplyExpansion(prompt.text, prompt.expansion, files_) +
                                 hooked.context);
  }
  ++meta_.turns;
  SaveLocked();
  BeginTurnContextLocked();
  AnnounceUntrustedRulesLocked();
  Emit(events::TurnStarted(prompt.text));
  Emit(events::UserMessage(prompt.text, prompt.client));
  return true;
}

bool Session::EndTurnLocked(v1::TurnOutcome outcome, const std::string& error) {
  const bool sealed =
      transcript_.Seal(outcome == v1::TURN_OUTCOME_CANCELLED ? "cancelled by the user"
                                                             : "the turn ended before it ran") > 0;
  SaveLocked(sealed ? Save::kAll : Save::kMetaOnly);
  partial_text_.clear();
  partial_reasoning_.clear();
  in_turn_ = false;
  v1::Event ended = TurnEndedEventLocked(outcome, error);
  events::AddTally(&ended, tally_, NowMs());
  Emit(std::move(ended));
  // Idle in the same step as the TurnEnded event: a client that answers it with Compact
  // must find the session free, not still winding down.
  if (queue_.empty() || shutting_down_) {
    running_ = false;
    DiscardIfUnansweredLocked();  // a script's prompt that got no answer, nobody attached
    return false;
  }
  return true;
}

llm::ModelRequest Session::BuildRequestLocked() const {
  llm::ModelRequest req;
  req.settings = settings_.model;
  // The cached wire text, not a copy of the transcript; a bad provider is reported when the
  // request is built for the wire, from the plain messages.
  if (absl::StatusOr<llm::Provider> provider = llm::ParseProvider(settings_.model.provider);
      provider.ok()) {
    req.prepared = std::make_shared<const llm::PreparedMessages>(
        request_cache_.Prepare(transcript_.messages(), transcript_.serialized(), *provider,
                               llm::OpenAiOptionsFor(settings_.model)));
  } else {
    req.messages = transcript_.messages();
  }
  req.tools = deps_.tools->Schemas();
  req.connect_timeout_ms = turn_.connect_timeout_ms;
  req.idle_timeout_ms = turn_.idle_timeout_ms;
  req.max_attempts = turn_.max_attempts;
  return req;
}

bool Session::ShouldCompactLocked() const {
  const TurnSettings& c = turn_;
  if (c.compact_at_chars > 0 &&
      static_cast<int64_t>(transcript_.CharCount()) > c.compact_at_chars) {
    return true;
  }
  return c.context_tokens > 0 && meta_.prompt_tokens > c.context_tokens * 8 / 10;
}

v1::TurnOutcome Session::RunTurn(std::string* error) {
  int max_steps;
  {
    SessionMutexLock l(&mu_);
    max_steps = turn_.max_steps;
    if (!prompt_blocked_.empty()) {
      *error = "a hook blocked the prompt: " + std::exchange(prompt_blocked_, "");
      return v1::TURN_OUTCOME_ERROR;
    }
  }
  for (int step = 0; step < max_steps; ++step) {
    if (cancelled_) return v1::TURN_OUTCOME_CANCELLED;
    if (std::optional<v1::TurnOutcome> end = RunStep(error); end.has_value()) return *end;
    if (cancelled_) return v1::TURN_OUTCOME_CANCELLED;
  }
  return v1::TURN_OUTCOME_MAX_STEPS;
}

std::optional<v1::TurnOutcome> Session::RunStep(std::string* error) {
  bool compact;
  {
    SessionMutexLock l(&mu_);
    compact = ShouldCompactLocked();
  }
  // A failed summary leaves the transcript as it was; the request below may still fit.
  if (compact) (void)CompactNow();
  // This step's tools (MCP servers come and go); the same set answers the step's calls.
  std::shared_ptr<const tools::ToolRegistry> mcp_tools;
  if (deps_.tools_for) {
    mcp_tools = deps_.tools_for(workdir_, id_, &cancelled_, [this](const std::string& m) {
      SessionMutexLock l(&mu_);
      Emit(events::Error(m));
    });
  }
  const tools::ToolRegistry* step_tools = mcp_tools ? mcp_tools.get() : deps_.tools;
  llm::ModelRequest req;
  {
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
      *error = absl::StrCat("internal error, transcript invalid: ", valid.message());
      return v1::TURN_OUTCOME_ERROR;
    }
    req = BuildRequestLocked();
    req.tools = step_tools->Schemas();
    partial_text_.clear();
    partial_reasoning_.clear();
  }
  TurnSink sink(this);
  absl::StatusOr<llm::ModelReply> reply = model_->Complete(req, &sink, &cancelled_);
  {
    SessionMutexLock l(&mu_);
    if (!reply.ok()) {
      // Text the user already saw stays in the transcript, so the model knows it said it.
      if (!partial_text_.empty()) {
        (void)transcript_.AppendAssistant({{"content", partial_text_}});
        SaveLocked(Save::kTranscriptOnly);
      }
      if (cancelled_ || absl::IsCancelled(reply.status())) return v1::TURN_OUTCOME_CANCELLED;
      *error = std::string(reply.status().message());
      return v1::TURN_OUTCOME_ERROR;
    }
    if (!RecordReplyLocked(*reply, error)) return v1::TURN_OUTCOME_ERROR;
  }
  if (reply->tool_calls.empty()) {
    if (reply->finish_reason != "length") return v1::TURN_OUTCOME_DONE;
    *error = "the model stopped at its output limit";
    return v1::TURN_OUTCOME_ERROR;
  }
  ToolDispatch(step_tools, this, &cancelled_).Run(reply->tool_calls, reply->LastCallTruncated());
  return std::nullopt;
}

bool Session::RecordReplyLocked(const llm::ModelReply& reply, std::string* error) {
  if (auto s = transcript_.AppendAssistant(llm::AssistantMessageFromReply(reply)); !s.ok()) {
    *error = absl::StrCat("the model's reply was malformed: ", s.message());
    return false;
  }
  partial_text_.clear();
  partial_reasoning_.clear();
  answered_ = true;
  meta_.tool_calls += static_cast<int64_t>(reply.tool_calls.size());
  RecordUsageLocked(reply);
  SaveLocked(Save::kTranscriptOnly);
  Emit(events::AssistantMessage(reply));
  return true;
}

// ---- Tool calls (ToolDispatch::Host) ------------------------------------------------------------

void Session::OnCallReady(const llm::ToolCall& call) {
  SessionMutexLock l(&mu_);
  Emit(events::ToolCallReady(call));
}

tools::ToolContext Session::MakeContext(const std::string& call_id) {
  checkpointer().BeforeTool();  // no tool touches a file before the turn's checkpoint exists
  tools::ToolContext ctx;
  ctx.call_id = call_id;
  ctx.workdir = workdir_;
  ctx.files = &files_;
  ctx.cancelled = &cancelled_;
  std::string cwd;
  {
    SessionMutexLock l(&mu_);
    cwd = meta_.cwd;
    ctx.default_timeout_s = turn_.bash_timeout_s;
    ctx.env = settings_.tool_env;
  }
  // Checked again at each use: the directory may be gone, and a loaded meta file is
  // repository content.
  ctx.cwd = DirectoryInside(workdir_, cwd);
  ctx.on_output = [this, call_id](std::string_view chunk, bool is_stderr) {
    SessionMutexLock l(&mu_);
    Emit(events::ToolOutput(call_id, chunk, is_stderr));
  };
  return ctx;
}

void Session::OnResults(const std::vector<llm::ToolCall>& calls, size_t first,
                        const std::vector<tools::ToolOutcome>& outcomes) {
  SessionMutexLock l(&mu_);
  for (size_t k = 0; k < outcomes.size(); ++k) {
    const llm::ToolCall& call = calls[first + k];
    auto diff = unasked_diffs_.extract(call.id);
    std::string content = outcomes[k].content;
    // The tool only knows it was cancelled; the model should know why.
    if (shutting_down_ && cancelled_) content += "\n[interrupted: the daemon was stopping]";
    if (auto s = transcript_.AppendToolResult(call.id, content); !s.ok()) continue;
    SaveLocked(Save::kTranscriptOnly);
    if (outcomes[k].denied_by_policy) ++tally_.denied_calls;
    v1::Event result =
        events::ToolResult(call, content, outcomes[k].is_error, outcomes[k].denied_by_policy);
    if (!diff.empty() && !outcomes[k].is_error) {
      result.mutable_tool_result()->set_diff(std::move(diff.mapped()));
    }
    Emit(std::move(result));
    if (call.name == tools::kUpdatePlanTool && !outcomes[k].is_error) RecordPlanLocked(call);
  }
}

// ---- Compaction ---------------------------------------------------------------------------------

absl::StatusOr<int> Session::CompactNow() {
  Json messages = Json::array();
  size_t cut;
  ModelSettings model;
  std::string cwd;
  bool manual;
  {
    SessionMutexLock l(&mu_);
    cut = transcript_.CutPoint();
    if (cut <= transcript_.FirstCompactable()) {
      return absl::FailedPreconditionError("the transcript is too short to compact");
    }
    for (size_t i = transcript_.FirstCompactable(); i < cut; ++i) {
      messages.push_back(transcript_.messages()[i]);
    }
    model = settings_.model;
    cwd = meta_.cwd;
    manual = !in_turn_;
  }
  hooks_->PreCompact(manual);
  // Instruction files edited since the session began reach it now.
  BuiltSystemPrompt prompt = BuildPrompt(workdir_, DirectoryInside(workdir_, cwd), *deps_.clock);
  absl::StatusOr<std::string> summary = Summarize(*model_, model, messages, &cancelled_);
  SessionMutexLock l(&mu_);
  if (!summary.ok()) {
    Emit(events::Error(absl::StrCat("compaction failed, the transcript is unchanged: ",
                                    summary.status().message())));
    return summary.status();
  }
  // The turn loop is the only writer while a turn runs, and it is here: the prefix is intact.
  const size_t first = transcript_.FirstCompactable();
  auto removed = transcript_.ReplacePrefix(cut, SummaryMessage(*summary));
  if (!removed.ok()) return removed.status();
  checkpointer().Compacted(static_cast<int>(first), static_cast<int>(removed->size()));
  RefreshSystemPromptLocked(prompt);
  if (auto s = AppendCompacted(workdir_, meta_.id, *removed, *summary); !s.ok()) {
    Emit(events::Error(absl::StrCat("cannot keep the compacted messages: ", s.message())));
  }
  ++meta_.compactions;
  meta_.prompt_tokens = 0;  // the next request reports the new size
  SaveLocked();
  Emit(events::Compacted(static_cast<int>(removed->size()), static_cast<int>(transcript_.size())));
  return static_cast<int>(removed->size());
}

}  // namespace agent::daemon
