// TurnRunner: a session's turns. It runs on the session's turn thread (Main: prompt after prompt
// until the queue is empty) and is everything a Turn (turn.h) and its CallGuard (call_guard.h)
// ask of the session: the next request, the reply as it streams and as it lands, the tools'
// results, compaction, the tool context, approvals.
//
// It holds none of what the clients see or what is saved: that is the SessionState's
// (session_state.h), changed through its methods, each of which says what a turn may change.
// What runs around those changes is here: the hooks, the call guard, the model connection, the
// tools' context, the checkpoints.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "daemon/checkpoints/checkpointer.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/llm/model_client.h"
#include "daemon/policy/rule_source.h"
#include "daemon/session/call_guard.h"
#include "daemon/session/editor_text.h"
#include "daemon/session/session_deps.h"
#include "daemon/session/session_state.h"
#include "daemon/session/turn_host.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/file_tracker.h"

namespace agent::daemon {

class TurnRunner : public TurnHost, public CallGuard::Host, public llm::StreamSink {
 public:
  // What the turns work with; all of it outlives the runner (the Session owns it).
  struct Parts {
    SessionState* state = nullptr;
    const SessionDeps* deps = nullptr;
    hooks::SessionHooks* hooks = nullptr;
    policy::RuleSource* rules = nullptr;
    tools::FileTracker* files = nullptr;
    tools::BackgroundJobs* jobs = nullptr;
    EditorText* editor_text = nullptr;
    // Made on first use (its record is a file): never under the state's mutex.
    std::function<checkpoints::Checkpointer&()> checkpointer;
    // Sets the session's mode as a person's command does (Session::SetPolicy: its running
    // children too), for the plan's hand-over.
    std::function<void(agent::v1::PolicyMode mode, const std::string& client)> set_mode;
  };
  explicit TurnRunner(Parts parts);

  // The turn thread's body: takes queued prompts one at a time and runs their turns; returns
  // when the queue is empty (the session idle) or the session shuts down.
  void Main();
  // Replaces the older messages by a summary (the model writes it; compaction.cc). The turn
  // thread calls it between steps; a person's Compact with no turn running (Session::Compact).
  absl::StatusOr<int> Compact();
  // The verdicts on calls (the mode, rules, hooks, a person); also records a person's rules.
  CallGuard& guard() { return *guard_; }

  // ---- TurnHost ----
  absl::StatusOr<llm::ModelRequest> NextRequest(const tools::ToolRegistry& tools) override {
    return state_.NextRequest(tools);
  }
  void LandSteers() override;
  llm::StreamSink* Stream() override { return this; }
  void KeepStreamedText() override { state_.KeepStreamedText(); }
  absl::Status AppendReply(const llm::ModelReply& reply) override {
    return state_.AppendReply(reply);
  }
  void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                     const std::vector<tools::ToolOutcome>& outcomes) override {
    state_.AppendResults(calls, first, outcomes);
  }
  bool ShouldCompact() override { return state_.ShouldCompact(); }
  absl::Status CompactTranscript() override { return Compact().status(); }
  std::shared_ptr<const tools::ToolRegistry> StepTools() override;
  void CallReady(const llm::ToolCall& call) override;
  std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call,
                                              const Json& args) override {
    return guard_->Authorize(call, args);
  }
  std::optional<tools::ToolOutcome> BeforeTool(const llm::ToolCall& call, const tools::Tool& tool,
                                               Json* args) override {
    return guard_->Before(call, tool, args);
  }
  void AfterTool(const llm::ToolCall& call, const Json& args,
                 tools::ToolOutcome* outcome) override {
    guard_->After(call, args, outcome);
  }
  // Also CallGuard::Host's.
  tools::ToolContext MakeToolContext(const std::string& call_id) override;

  // ---- CallGuard::Host ----
  agent::v1::PolicyMode Mode() override { return state_.mode(); }
  void Tell(std::string text, bool error) override;
  void RememberDiff(const std::string& call_id, std::string diff) override {
    state_.RememberDiff(call_id, std::move(diff));
  }
  // Opens the approval, shows it to the clients and waits for the first answer or a cancel.
  std::optional<ApprovalGate::Answer> Ask(const agent::v1::PendingApproval& approval) override {
    return state_.Ask(approval);
  }

  // ---- llm::StreamSink: the reply as it streams ----
  void OnText(std::string_view text) override { state_.StreamText(text); }
  void OnReasoning(std::string_view text) override { state_.StreamReasoning(text); }
  void OnToolCallStarted(std::string_view id, std::string_view name) override {
    state_.CallStarted(id, name);
  }
  void OnRetry(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) override {
    state_.Retrying(attempt, max_attempts, delay_ms, reason);
  }

 private:
  // The next queued prompt's hooks (SessionStart, UserPromptSubmit) run, then its turn begins;
  // false when there is none (the thread ends). `untrusted_rules`: the project's allow rules
  // nobody trusted.
  bool BeginNextTurn(std::vector<std::string> untrusted_rules);
  // SessionStart and UserPromptSubmit for a prompt or a steer; the context the hooks add comes
  // ready to append to the user message.
  hooks::PromptHooks PromptHooksFor(const std::string& text);
  // Stop hooks after a turn the model ended; true when they sent it back to work (`continued`
  // times so far), the reason then in the transcript.
  bool ContinueAfterStop(int continued);
  // The ask_user tool's question to every attached client (tools/ask_user.h), answered as an
  // approval is: the first answer wins; a cancel ends the wait.
  tools::QuestionAnswer AskUser(const std::string& call_id, const std::string& question,
                                const std::vector<std::string>& options);
  // Plan mode's hand-over (tools/present_plan.h): the plan as a question whose options are the
  // modes to go on in; the answer sets the mode.
  tools::ToolOutcome PresentPlan(const std::string& call_id, const std::string& plan);

  SessionState& state_;
  const SessionDeps& deps_;
  hooks::SessionHooks& hooks_;
  policy::RuleSource& rules_;
  tools::FileTracker& files_;
  tools::BackgroundJobs& jobs_;
  EditorText& editor_text_;
  const std::function<checkpoints::Checkpointer&()> checkpointer_;
  const std::function<void(agent::v1::PolicyMode, const std::string&)> set_mode_;
  std::unique_ptr<llm::ModelClient> model_;  // the turn thread's, and a compaction's
  std::unique_ptr<CallGuard> guard_;         // its Host is this runner
};

}  // namespace agent::daemon
