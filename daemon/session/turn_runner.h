// TurnRunner: the session's side of its turns. It runs on the session's turn thread (Main:
// prompt after prompt until the queue is empty) and is everything a Turn (turn.h) and its
// CallGuard (call_guard.h) ask of the session: the next request, the reply as it streams and
// as it lands, the tools' results, compaction, the tool context, approvals.
//
// It holds no state of the session's own: what the clients see or what is saved (the
// transcript, the event log, the meta file, the queue) is the Session's, read and changed under
// the session's mutex, briefly, never across the model, a tool, a hook or the disk. What only a
// turn needs (the model connection, the request cache, the tools' offer, diffs of calls that
// ran unasked) is its own.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/request_cache.h"
#include "daemon/llm/tool_offer.h"
#include "daemon/session/call_guard.h"
#include "daemon/session/session.h"
#include "daemon/session/turn_host.h"

namespace agent::daemon {

class TurnRunner : public TurnHost, public CallGuard::Host, public llm::StreamSink {
 public:
  explicit TurnRunner(Session& session);

  // The turn thread's body: takes queued prompts one at a time and runs their turns; returns
  // when the queue is empty (the session idle) or the session shuts down.
  void Main() ABSL_LOCKS_EXCLUDED(s_.mu_);
  // Replaces the older messages by a summary (the model writes it; compaction.cc). The turn
  // thread calls it between steps; a person's Compact with no turn running (Session::Compact).
  absl::StatusOr<int> Compact() ABSL_LOCKS_EXCLUDED(s_.mu_);

  // ---- TurnHost ----
  absl::StatusOr<llm::ModelRequest> NextRequest(const tools::ToolRegistry& tools) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);
  void LandSteers() override ABSL_LOCKS_EXCLUDED(s_.mu_);
  llm::StreamSink* Stream() override { return this; }
  void KeepStreamedText() override ABSL_LOCKS_EXCLUDED(s_.mu_);
  absl::Status AppendReply(const llm::ModelReply& reply) override ABSL_LOCKS_EXCLUDED(s_.mu_);
  void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                     const std::vector<tools::ToolOutcome>& outcomes) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);
  bool ShouldCompact() override ABSL_LOCKS_EXCLUDED(s_.mu_);
  absl::Status CompactTranscript() override { return Compact().status(); }
  std::shared_ptr<const tools::ToolRegistry> StepTools() override;
  void CallReady(const llm::ToolCall& call) override ABSL_LOCKS_EXCLUDED(s_.mu_);
  std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call, const Json& args) override;
  std::optional<tools::ToolOutcome> BeforeTool(const llm::ToolCall& call, const tools::Tool& tool,
                                               Json* args) override;
  void AfterTool(const llm::ToolCall& call, const Json& args, tools::ToolOutcome* outcome) override;
  // Also CallGuard::Host's.
  tools::ToolContext MakeToolContext(const std::string& call_id) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);

  // ---- CallGuard::Host (call_host.cc) ----
  agent::v1::PolicyMode Mode() override ABSL_LOCKS_EXCLUDED(s_.mu_);
  void Tell(std::string text, bool error) override ABSL_LOCKS_EXCLUDED(s_.mu_);
  void RememberDiff(const std::string& call_id, std::string diff) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);
  // Opens the approval, shows it to the clients and waits (the lock released) for the first
  // answer or a cancel.
  std::optional<ApprovalGate::Answer> Ask(const agent::v1::PendingApproval& approval) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);

  // ---- llm::StreamSink: the reply as it streams ----
  void OnText(std::string_view text) override ABSL_LOCKS_EXCLUDED(s_.mu_);
  void OnReasoning(std::string_view text) override ABSL_LOCKS_EXCLUDED(s_.mu_);
  void OnToolCallStarted(std::string_view id, std::string_view name) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);
  void OnRetry(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) override
      ABSL_LOCKS_EXCLUDED(s_.mu_);

 private:
  // The next queued prompt's hooks (SessionStart, UserPromptSubmit) run without the lock, then
  // its turn begins under it; false when there is none (the thread ends).
  // `untrusted_rules`: the project's allow rules nobody trusted (read without the lock).
  bool BeginNextTurn(std::vector<std::string> untrusted_rules) ABSL_LOCKS_EXCLUDED(s_.mu_);
  bool BeginTurnLocked(std::vector<std::string> untrusted_rules, hooks::PromptHooks hooked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);
  // SessionStart and UserPromptSubmit for a prompt or a steer (no lock held); the context the
  // hooks add comes ready to append to the user message.
  hooks::PromptHooks PromptHooksFor(const std::string& text) ABSL_LOCKS_EXCLUDED(s_.mu_);
  // The steers the turn did not take become the next prompts, in the order they came.
  void QueueUntakenSteersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);
  // Seals what the turn left unanswered and saves the transcript whole (idle).
  void SealTurnLocked(agent::v1::TurnOutcome outcome) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);
  // Emits TurnEnded; false when the thread should end.
  bool EndTurnLocked(agent::v1::TurnOutcome outcome, const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);
  // Stop hooks after a turn the model ended; true when they sent it back to work (`continued`
  // times so far), the reason then in the transcript.
  bool ContinueAfterStop(int continued) ABSL_LOCKS_EXCLUDED(s_.mu_);
  llm::ModelRequest BuildRequestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);
  // What the turn adds to the session's usage and plan.
  void RecordUsageLocked(const llm::ModelReply& reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);
  void RecordPlanLocked(const llm::ToolCall& call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_.mu_);

  Session& s_;
  std::unique_ptr<llm::ModelClient> model_;  // the turn thread's, and a compaction's
  // The transcript in wire form, for the next request (filled by BuildRequestLocked).
  llm::RequestCache request_cache_ ABSL_GUARDED_BY(s_.mu_);
  llm::ToolOffer tool_offer_ ABSL_GUARDED_BY(s_.mu_);  // the tools' order and cap (tool_offer.h)
  std::map<std::string, std::string> unasked_diffs_ ABSL_GUARDED_BY(s_.mu_);  // call id -> diff
  std::string prompt_blocked_ ABSL_GUARDED_BY(s_.mu_);  // why a hook refused the turn's prompt
};

}  // namespace agent::daemon
