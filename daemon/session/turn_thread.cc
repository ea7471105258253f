// The turn thread of a Session and the session's side of the turn loop (TurnHost): it takes
// queued prompts one at a time and runs a Turn (daemon/session/turn.h) for each. Every method
// here takes the session's lock briefly; saves are written after it is released.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/compactor.h"
#include "daemon/llm/request_builder.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"
#include "daemon/session/turn.h"
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

// ---- Streaming progress from the model transport (llm::StreamSink) ------------------------------

void Session::OnText(std::string_view text) {
  SessionMutexLock l(&mu_);
  answered_ = true;  // the model answers: the session is kept from here on
  partial_text_.append(text);
  Emit(events::TextDelta(text));
}

void Session::OnReasoning(std::string_view text) {
  SessionMutexLock l(&mu_);
  answered_ = true;
  partial_reasoning_.append(text);
  Emit(events::ReasoningDelta(text));
}

void Session::OnToolCallStarted(std::string_view id, std::string_view name) {
  SessionMutexLock l(&mu_);
  answered_ = true;
  Emit(events::ToolCallStarted(id, name));
}

void Session::OnRetry(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) {
  SessionMutexLock l(&mu_);
  // What streamed before the failed attempt is discarded with it.
  partial_text_.clear();
  partial_reasoning_.clear();
  RecordRetryLocked();
  Emit(events::Retrying(attempt, max_attempts, delay_ms, reason));
}

void Session::StartTurnThreadLocked() {
  if (running_) return;
  // The previous turn thread has finished: running_ is false only after its last lock.
  if (turn_thread_.joinable()) turn_thread_.join();
  running_ = true;
  turn_thread_ = std::thread([this] { TurnThreadMain(); });
}

void Session::TurnThreadMain() {
  checkpointer();  // made (its record read) before the lock is taken
  // May read the rule files.
  if (!BeginNextTurn(rules_->UntrustedRules())) return;
  for (;;) {
    int max_steps;
    std::string blocked;
    {
      SessionMutexLock l(&mu_);
      max_steps = turn_.max_steps;
      blocked = std::exchange(prompt_blocked_, "");
    }
    std::string error;
    v1::TurnOutcome outcome = v1::TURN_OUTCOME_ERROR;
    if (!blocked.empty()) {
      error = "a hook blocked the prompt: " + blocked;
    } else {
      outcome = Turn(this, model_.get(), &cancelled_, max_steps).Run(&error);
      for (int n = 0; outcome == v1::TURN_OUTCOME_DONE && ContinueAfterStop(n); ++n) {
        outcome = Turn(this, model_.get(), &cancelled_, max_steps).Run(&error);  // sent back
      }
    }
    // Before TurnEnded: an Undo that follows it finds the turn's checkpoint.
    std::vector<std::string> notices = checkpointer().EndTurn(NowMs());
    std::vector<std::string> untrusted = rules_->UntrustedRules();  // for the next turn
    {
      SessionMutexLock l(&mu_);
      SealTurnLocked(outcome);
    }  // the turn's messages are written here, before TurnEnded says how it went
    {
      SessionMutexLock l(&mu_);
      for (std::string& n : notices) NoticeLocked(std::move(n));
      if (saver_.unsaved() && outcome != v1::TURN_OUTCOME_CANCELLED) {
        outcome = v1::TURN_OUTCOME_ERROR;
        error = absl::StrCat("the session could not be saved (", saver_.last_error().message(),
                             "); it is kept in memory and saved again when the disk allows");
      }
      if (!EndTurnLocked(outcome, error)) return;
    }
    if (!BeginNextTurn(std::move(untrusted))) return;
  }
}

bool Session::BeginNextTurn(std::vector<std::string> untrusted_rules) {
  std::string text;
  {
    SessionMutexLock l(&mu_);
    if (queue_.empty() || shutting_down_) {
      running_ = false;
      return false;
    }
    text = queue_.front().text;
  }
  // Only this thread takes prompts off the queue, and only Shutdown empties it: the front is
  // still this prompt below unless the session is shutting down.
  hooks::PromptHooks hooked = PromptHooks(text);
  SessionMutexLock l(&mu_);
  return BeginTurnLocked(std::move(untrusted_rules), std::move(hooked));
}

bool Session::BeginTurnLocked(std::vector<std::string> untrusted_rules, hooks::PromptHooks hooked) {
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
  // A prompt a hook blocked never reaches the model; the turn ends with the hook's reason.
  prompt_blocked_ = hooked.blocked ? hooked.reason : "";
  // Cannot fail: turns end with nothing pending.
  if (!hooked.blocked) {
    (void)transcript_.AppendUser(
        ApplyExpansion(prompt.text, prompt.expansion, files_) + hooked.context,
        prompt.expansion.image_urls);
  }
  ++meta_.turns;
  SaveLocked();
  BeginTurnContextLocked();
  AnnounceUntrustedRulesLocked(std::move(untrusted_rules));
  Emit(events::TurnStarted(prompt.text));
  Emit(events::UserMessage(prompt.text, prompt.client));
  return true;
}

void Session::SealTurnLocked(v1::TurnOutcome outcome) {
  transcript_.Seal(outcome == v1::TURN_OUTCOME_CANCELLED ? "cancelled by the user"
                                                         : "the turn ended before it ran");
  // Idle: the transcript whole, its journal folded in.
  SaveLocked(Save::kWhole);
}

bool Session::EndTurnLocked(v1::TurnOutcome outcome, const std::string& error) {
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

bool Session::ShouldCompactLocked() const {
  const TurnSettings& c = turn_;
  if (c.compact_at_chars > 0 &&
      static_cast<int64_t>(transcript_.CharCount()) > c.compact_at_chars) {
    return true;
  }
  return c.context_tokens > 0 && meta_.prompt_tokens > c.context_tokens * 8 / 10;
}

// ---- The transcript (TurnHost) ------------------------------------------------------------------

absl::StatusOr<llm::ModelRequest> Session::NextRequest(const tools::ToolRegistry& tools) {
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

void Session::KeepStreamedText() {
  SessionMutexLock l(&mu_);
  if (partial_text_.empty()) return;
  (void)transcript_.AppendAssistant({{"content", partial_text_}});
  SaveLocked(Save::kTranscriptOnly);
}

absl::Status Session::AppendReply(const llm::ModelReply& reply) {
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
  return absl::OkStatus();
}

bool Session::ShouldCompact() {
  SessionMutexLock l(&mu_);
  return ShouldCompactLocked();
}

std::shared_ptr<const tools::ToolRegistry> Session::StepTools() {
  if (!deps_.tools_for)
    return std::shared_ptr<const tools::ToolRegistry>(deps_.tools, [](auto*) {});
  std::shared_ptr<const tools::ToolRegistry> tools =
      deps_.tools_for(workdir_, id_, &cancelled_, [this](const std::string& m) {
        SessionMutexLock l(&mu_);
        Emit(events::Error(m));
      });
  if (tools) return tools;
  return std::shared_ptr<const tools::ToolRegistry>(deps_.tools, [](auto*) {});
}

// ---- Tool calls (TurnHost)
// -----------------------------------------------------------------------

void Session::CallReady(const llm::ToolCall& call) {
  SessionMutexLock l(&mu_);
  Emit(events::ToolCallReady(call));
}

tools::ToolContext Session::MakeToolContext(const std::string& call_id) {
  checkpointer().BeforeTool();  // no tool touches a file before the turn's checkpoint exists
  tools::ToolContext ctx;
  ctx.call_id = call_id;
  ctx.workdir = workdir_;
  ctx.files = &files_;
  ctx.cancelled = &cancelled_;
  ctx.sandbox = deps_.sandbox.get();
  ctx.jobs = &jobs_;
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
  ctx.editor_text = [this](const std::string& path) -> std::optional<std::string> {
    // To the first editor attached, directly: the question is not session history.
    auto send = [this](const v1::Event& e) {
      SessionMutexLock l(&mu_);
      for (const Client& c : clients_) {
        if (!c.serves_file_text) continue;
        c.sub->Deliver(std::make_shared<const v1::Event>(e));
        return true;
      }
      return false;
    };
    return editor_text_.Ask(path, send, &cancelled_);
  };
  return ctx;
}

void Session::AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                            const std::vector<tools::ToolOutcome>& outcomes) {
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
  // What is removed is archived first: a compaction that cannot keep it does not happen.
  absl::Status archived =
      summary.ok() ? AppendCompacted(workdir_, id_, messages, *summary) : summary.status();
  const bool instructions_changed = archived.ok() && MarkInstructionsSeen(workdir_, prompt);
  size_t first = 0;
  absl::StatusOr<Json> removed;
  {
    SessionMutexLock l(&mu_);
    if (!summary.ok()) {
      Emit(events::Error(absl::StrCat("compaction failed, the transcript is unchanged: ",
                                      summary.status().message())));
      return summary.status();
    }
    if (!archived.ok()) {
      Emit(
          events::Error(absl::StrCat("compaction failed, the transcript is unchanged: cannot keep "
                                     "the messages it would remove: ",
                                     archived.message())));
      return archived;
    }
    // The turn loop is the only writer while a turn runs, and it is here: the prefix is intact.
    first = transcript_.FirstCompactable();
    removed = transcript_.ReplacePrefix(cut, SummaryMessage(*summary));
    if (!removed.ok()) return removed.status();
    RefreshSystemPromptLocked(prompt, instructions_changed);
    ++meta_.compactions;
    meta_.prompt_tokens = 0;  // the next request reports the new size
    SaveLocked(Save::kWhole);
    Emit(
        events::Compacted(static_cast<int>(removed->size()), static_cast<int>(transcript_.size())));
  }  // saved here
  // The checkpoints' message numbers follow the shorter transcript (their record is a file).
  checkpointer().Compacted(static_cast<int>(first), static_cast<int>(removed->size()));
  return static_cast<int>(removed->size());
}

}  // namespace agent::daemon
