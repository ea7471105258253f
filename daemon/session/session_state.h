// SessionState: what a session is to its clients and on disk, in one object behind one mutex:
// the transcript (and so the one rule), the meta file, the prompt queue and the steers, the
// reply streaming in, usage and the plan, the running turn's settings and tally, the pending
// approval, the attached clients and their event log, and the save queue.
//
// Its methods are everything a command (Session, from gRPC threads) or a turn (TurnRunner, on
// the turn thread) may change of it. Each takes the mutex for itself, briefly, and never holds
// it across I/O: a method that changes what is saved queues the write under the mutex and
// makes it before it returns, on the caller's thread, once the mutex is released (WriteSaves:
// the call is in each such method, not in a destructor). Events reach the clients after the
// mutex is released too (SessionMutexLock starts the gRPC writes).
//
// It also owns the turn thread (its body is TurnRunner::Main), because whether one runs is
// decided with the queue, under the same mutex.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/mutex.h"
#include "common/transcript.h"
#include "daemon/context/session_context.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/request_cache.h"
#include "daemon/llm/tool_offer.h"
#include "daemon/prompt/prompt_expansion.h"
#include "daemon/prompt/system_prompt.h"
#include "daemon/session/approval_gate.h"
#include "daemon/session/audience.h"
#include "daemon/session/events.h"
#include "daemon/session/files.h"
#include "daemon/session/saver.h"
#include "daemon/session/turn_settings.h"
#include "daemon/store/store.h"
#include "daemon/tools/file_tracker.h"
#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon {

class Session;

struct SessionSettings {
  ModelSettings model;
  agent::v1::PolicyMode policy = agent::v1::POLICY_MODE_ASK;
  int max_steps = 0;  // 0: config default (under client.max_steps when that is set)
  // What the creating client sent: fills what a prompt's own ClientSettings lack
  // (turn_settings.h). Memory only.
  agent::v1::ClientSettings client;
  // Create only: where the tools run (kept in the meta file), checked to be inside the
  // workdir (common/paths.h DirectoryInside), else the workdir.
  std::string cwd;
  // Tool commands' environment: the latest client's, filtered (common/tool_env.h). Empty:
  // none known, tools get the minimal one. Memory only.
  std::vector<std::string> tool_env;
  // Create only: a child session made by the `task` tool (daemon/subagents/). It is kept
  // even before the model answers (its parent names it), and its system message is `prompt`.
  struct ChildOf {
    std::string parent_id;
    std::string agent;
    int depth = 1;
    BuiltSystemPrompt prompt;
  };
  std::optional<ChildOf> child;
};

// A prompt or a steer on its way into the transcript.
struct QueuedPrompt {
  std::string text;
  std::string client;
  PromptExpansion expansion;
  agent::v1::ClientSettings settings;  // what the sending client set
};

class SessionState {
 public:
  struct Init {
    std::string workdir;
    SessionMeta meta;
    Transcript transcript;
    SessionSettings settings;
    bool answered = true;
    std::string epoch;
    const Clock* clock = nullptr;
    const Config* config = nullptr;  // the daemon's defaults; outlives the state
    std::unique_ptr<SessionFiles> files;
    std::string sandbox;  // how commands are confined, for Info (empty: not told)
  };
  explicit SessionState(Init init);
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;
  // Joins the turn thread (Session::Shutdown has ended it).
  ~SessionState();

  // How a session comes to be (Session::Opening): the context it starts with, then its first
  // save, written before this returns.
  enum class FirstWrite { kNothing, kAll, kMetaOnly };
  void Open(bool is_new, bool forked, const BuiltSystemPrompt& prompt, context::PriceTable prices,
            const std::string& notice, FirstWrite write) ABSL_LOCKS_EXCLUDED(mu_);
  // The turn thread's body (TurnRunner::Main), set once before any prompt.
  void SetTurnBody(std::function<void()> body) { turn_body_ = std::move(body); }

  const std::string& workdir() const { return workdir_; }
  const std::string& id() const { return id_; }
  // Set by Cancel and Shutdown, cleared when a turn begins; tools and the model watch it.
  const std::atomic<bool>* cancelled() const { return &cancelled_; }
  // What the model read of which file (thread-safe on its own), kept in the meta file and taken
  // in again by a load, so an edit after a restart still knows whether a file changed since.
  tools::FileTracker& files() { return files_; }

  // ---- Queries ----
  agent::v1::Session Info() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string TranscriptJson() const ABSL_LOCKS_EXCLUDED(mu_);
  ModelSettings model_settings() const ABSL_LOCKS_EXCLUDED(mu_);
  agent::v1::PolicyMode mode() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string cwd() const ABSL_LOCKS_EXCLUDED(mu_);
  bool discarded() const ABSL_LOCKS_EXCLUDED(mu_);
  bool Busy() const ABSL_LOCKS_EXCLUDED(mu_);
  bool unsaved() const { return saver_.unsaved(); }
  absl::Status unsaved_error() const { return saver_.last_error(); }
  int attached_clients() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<agent::v1::InstructionFile> InstructionFiles() const ABSL_LOCKS_EXCLUDED(mu_);
  agent::v1::ContextReport ContextReport(const std::vector<Json>& tool_schemas,
                                         int64_t context_tokens) const ABSL_LOCKS_EXCLUDED(mu_);
  // The transcript, settings and meta a fork starts from.
  void CopyForFork(Transcript* transcript, SessionSettings* settings, SessionMeta* meta) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // What a hook is told of the session now.
  hooks::HookContext HookContext() const ABSL_LOCKS_EXCLUDED(mu_);
  bool is_child() const ABSL_LOCKS_EXCLUDED(mu_);
  bool resumed() const ABSL_LOCKS_EXCLUDED(mu_);

  // ---- Clients ----
  void Attach(Subscriber* sub, const std::string& client_name, bool read_only,
              const std::string& epoch, uint64_t after_seq, bool serves_file_text)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Detach(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  void Resync(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  void AddObserver(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveObserver(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  void EndStreams(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // `event` to the first editor attached, not to the history (editor_text.h).
  bool AskEditor(const agent::v1::Event& event) ABSL_LOCKS_EXCLUDED(mu_);
  void Publish(agent::v1::Event event) ABSL_LOCKS_EXCLUDED(mu_);
  void Notice(std::string text) ABSL_LOCKS_EXCLUDED(mu_);
  void Error(std::string text) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- Commands ----
  // Why a prompt from `client` cannot be taken now (read-only, removed, shutting down, empty).
  absl::Status CheckPrompt(const std::string& client, const std::string& text,
                           const PromptExpansion& expansion) const ABSL_LOCKS_EXCLUDED(mu_);
  // Queues the prompt and starts the turn thread unless it runs (or compaction holds turns);
  // the settings change only once the prompt is accepted. Returns its position.
  absl::StatusOr<int> Enqueue(QueuedPrompt prompt, const ModelSettings& model,
                              std::optional<std::vector<std::string>> tool_env)
      ABSL_LOCKS_EXCLUDED(mu_);
  // False when no turn runs to take it (see Session::Steer).
  absl::StatusOr<bool> Steer(QueuedPrompt steer) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Approve(const std::string& call_id, ApprovalGate::Answer answer)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<bool> Cancel(const std::string& client) ABSL_LOCKS_EXCLUDED(mu_);
  // Sets the mode (a PolicyChanged naming `client` when it changes) and returns the running
  // children it must reach too.
  std::vector<std::shared_ptr<Session>> SetMode(agent::v1::PolicyMode mode,
                                                const std::string& client) ABSL_LOCKS_EXCLUDED(mu_);
  void SetModel(const std::string& model) ABSL_LOCKS_EXCLUDED(mu_);
  void SetToolEnvironment(std::vector<std::string> env) ABSL_LOCKS_EXCLUDED(mu_);
  // Holds turns off while a person's compaction or restore runs (prompts sent meanwhile wait);
  // FailedPrecondition naming `what` while a turn runs or waits. With `client`, a read-only
  // observer or a removed session is refused too.
  absl::Status HoldTurns(const std::optional<std::string>& client, const std::string& what)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the hold; `note` (non-empty) is appended for the model first and saved; `notice` is
  // told to the clients. Starts the turns that waited.
  void ReleaseTurns(const std::string& note, const std::string& notice) ABSL_LOCKS_EXCLUDED(mu_);
  // A failed save written again, whole; true when nothing is left unsaved.
  bool RetrySave() ABSL_LOCKS_EXCLUDED(mu_);
  // `agent rm`: SessionRemoved to the clients, their streams ended, nothing saved again.
  void MarkRemoved(const std::string& by_client) ABSL_LOCKS_EXCLUDED(mu_);
  // Shutdown, first half: no prompt is taken again, the turn is cancelled, its waits end.
  void StopTurns() ABSL_LOCKS_EXCLUDED(mu_);
  // Joins the turn thread once StopTurns ended it.
  void JoinTurnThread();
  // Shutdown, second half: seals and saves whole, once; false when it was closed before.
  bool Close(std::string_view reason) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- Subagents ----
  SessionSettings Inherited() const ABSL_LOCKS_EXCLUDED(mu_);
  void ForwardChildApproval(const agent::v1::PendingApproval& approval) ABSL_LOCKS_EXCLUDED(mu_);
  void ChildApprovalResolved(const std::string& child_id, const std::string& call_id,
                             std::optional<agent::v1::Event> resolved) ABSL_LOCKS_EXCLUDED(mu_);
  std::string ChildApprovalOwner(const std::string& call_id) const ABSL_LOCKS_EXCLUDED(mu_);
  void AddChildUsage(const agent::v1::Usage& usage) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns this session's mode of now, for the child.
  agent::v1::PolicyMode AddRunningChild(const std::shared_ptr<Session>& child)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveRunningChild(const Session* child) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- A turn: what the turn thread (TurnRunner) may change ----
  // The text of the prompt the next turn takes, for its hooks; nullopt when there is none
  // (the thread ends: the state says so in the same step).
  std::optional<std::string> NextPromptText() ABSL_LOCKS_EXCLUDED(mu_);
  // Takes that prompt: the turn's settings, its user message (unless a hook blocked it) with
  // what the hooks added, its checkpoint begun (`begin_checkpoint(turn, at_message, text)`),
  // TurnStarted. False when there is no prompt any more (shutting down).
  bool BeginTurn(std::vector<std::string> untrusted_rules, hooks::PromptHooks hooked,
                 tools::FileTracker& files,
                 const std::function<void(int, int, const std::string&)>& begin_checkpoint)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The running turn's step limit, and why a hook refused its prompt (empty: it did not).
  struct TurnStart {
    int max_steps = 0;
    std::string blocked;
  };
  TurnStart TakeTurnStart() ABSL_LOCKS_EXCLUDED(mu_);
  // What a tool call runs with now: where, for how long at most, in which environment.
  struct ToolSettings {
    std::string cwd;  // as the meta file has it: not checked yet
    int bash_timeout_s = 0;
    std::vector<std::string> env;
  };
  ToolSettings tool_settings() const ABSL_LOCKS_EXCLUDED(mu_);
  // The reply as it streams: shown and kept for a snapshot until the reply lands.
  void StreamText(std::string_view text) ABSL_LOCKS_EXCLUDED(mu_);
  void StreamReasoning(std::string_view text) ABSL_LOCKS_EXCLUDED(mu_);
  void CallStarted(std::string_view id, std::string_view name) ABSL_LOCKS_EXCLUDED(mu_);
  void Retrying(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The steers sent since the last step, for their hooks; then LandSteers puts those the hooks
  // let through into the transcript, in order.
  std::deque<QueuedPrompt> TakeSteers() ABSL_LOCKS_EXCLUDED(mu_);
  void LandSteers(std::deque<QueuedPrompt> steers, const std::vector<hooks::PromptHooks>& hooked,
                  tools::FileTracker& files) ABSL_LOCKS_EXCLUDED(mu_);
  // The next request: the transcript in wire form (checked: nothing pending) and the offer of
  // `tools`.
  absl::StatusOr<llm::ModelRequest> NextRequest(const tools::ToolRegistry& tools)
      ABSL_LOCKS_EXCLUDED(mu_);
  void KeepStreamedText() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status AppendReply(const llm::ModelReply& reply) ABSL_LOCKS_EXCLUDED(mu_);
  void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                     const std::vector<tools::ToolOutcome>& outcomes) ABSL_LOCKS_EXCLUDED(mu_);
  // Plan mode's hand-over: the plan's list items (Markdown: `1.`, `-`, `*`) become the
  // session's plan every client shows, each pending, as update_plan's would.
  void ShowPlan(const std::string& markdown) ABSL_LOCKS_EXCLUDED(mu_);
  // An edit that ran without asking: its diff goes with its result.
  void RememberDiff(const std::string& call_id, std::string diff) ABSL_LOCKS_EXCLUDED(mu_);
  bool ShouldCompact() const ABSL_LOCKS_EXCLUDED(mu_);
  // Opens `approval` to the clients and waits for the first answer, or a cancel (nullopt).
  std::optional<ApprovalGate::Answer> Ask(const agent::v1::PendingApproval& approval)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A Stop hook sent the model back to work with `reason`; false when the turn was cancelled.
  bool SendBackToWork(const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // Seals what the turn left unanswered and saves the transcript whole (idle).
  void SealTurn(agent::v1::TurnOutcome outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // TurnEnded (after `notices`); an unsaved session turns a finished turn into an error. The
  // untaken steers become the next prompts. False when the thread should end.
  bool EndTurn(agent::v1::TurnOutcome outcome, std::string error, std::vector<std::string> notices)
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- Compaction (compaction.cc) ----
  struct CompactionInput {
    Json messages;  // what the summary replaces
    size_t cut = 0;
    ModelSettings model;
    std::string cwd;
    bool manual = false;  // a person's, between turns
  };
  absl::StatusOr<CompactionInput> BeginCompaction() const ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces messages [FirstCompactable, cut) by the summary, with the rebuilt system prompt;
  // returns the first replaced message and how many were.
  absl::StatusOr<std::pair<size_t, size_t>> FinishCompaction(size_t cut, const std::string& summary,
                                                             const BuiltSystemPrompt& prompt,
                                                             bool instructions_changed)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Save { kAll, kTranscriptOnly, kMetaOnly, kWhole };
  // Queues what changed for the disk (no I/O); WriteSaves writes it, with the mutex released.
  void SaveLocked(Save what = Save::kAll) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteSaves() ABSL_LOCKS_EXCLUDED(mu_);
  void OnSaveResult(const SessionSaver::Outcome& outcome) ABSL_LOCKS_EXCLUDED(mu_);
  void Emit(agent::v1::Event event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    audience_.Emit(std::move(event));
  }
  void NoticeLocked(std::string text) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The project's allow rules nobody trusted, told when the set differs from the last told.
  void AnnounceUntrustedRulesLocked(std::vector<std::string> untrusted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckPromptLocked(const std::string& client, const std::string& text,
                                 const PromptExpansion& expansion) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartTurnThreadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The thread ends: nothing to take. After it the turn thread never takes `mu_` again (the next
  // thread's start joins it under `mu_`).
  void StopRunningLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DiscardIfUnansweredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueUntakenSteersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases the mutex for a moment so the client writes queued so far start (before a wait).
  void StartDeferredWritesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::Event SnapshotLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::Session InfoLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::SessionState StateLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  llm::ModelRequest BuildRequestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordUsageLocked(const llm::ModelReply& reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordPlanLocked(const llm::ToolCall& call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts a rebuilt system message (fresh instruction files) in place of the first message.
  void RefreshSystemPromptLocked(const BuiltSystemPrompt& prompt, bool changed_since_seen)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t NowMs() const { return clock_->NowMs(); }

  const std::string workdir_;
  const std::string id_;
  const Clock* const clock_;
  const Config* const config_;
  const std::string sandbox_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> turn_body_;
  tools::FileTracker files_;

  mutable agent::Mutex mu_;
  SessionMeta meta_ ABSL_GUARDED_BY(mu_);
  // Loaded, forked, or the model started answering: kept even when nobody is attached.
  bool answered_ ABSL_GUARDED_BY(mu_);
  bool discarded_ ABSL_GUARDED_BY(mu_) = false;
  Transcript transcript_ ABSL_GUARDED_BY(mu_);
  SessionSettings settings_ ABSL_GUARDED_BY(mu_);
  TurnSettings turn_ ABSL_GUARDED_BY(mu_);  // of the running turn (set when it begins)
  Audience audience_ ABSL_GUARDED_BY(mu_);  // the clients and the event log
  ApprovalGate gate_ ABSL_GUARDED_BY(mu_);
  std::deque<QueuedPrompt> queue_ ABSL_GUARDED_BY(mu_);
  // Steered into the running turn, not taken yet.
  std::deque<QueuedPrompt> steers_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // the turn thread is alive
  bool in_turn_ ABSL_GUARDED_BY(mu_) = false;  // it took a prompt and has not ended its turn
  // Cancel came while the thread was between turns, taking the next prompt: that turn starts
  // cancelled (the person pressed Ctrl-C at what was about to run).
  bool cancel_next_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = false;  // a compaction or restore holds turns off
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool removed_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // Close saved it
  std::string partial_text_ ABSL_GUARDED_BY(mu_);
  std::string partial_reasoning_ ABSL_GUARDED_BY(mu_);
  std::string prompt_blocked_ ABSL_GUARDED_BY(mu_);  // why a hook refused the turn's prompt
  bool save_failed_ ABSL_GUARDED_BY(mu_) = false;    // told to the clients
  std::vector<std::string> untrusted_told_ ABSL_GUARDED_BY(mu_);
  context::SessionContext ctx_ ABSL_GUARDED_BY(mu_);
  events::TurnTally tally_ ABSL_GUARDED_BY(mu_);  // of the turn running
  std::vector<agent::v1::PendingApproval> child_approvals_ ABSL_GUARDED_BY(mu_);  // forwarded
  std::vector<std::weak_ptr<Session>> running_children_ ABSL_GUARDED_BY(mu_);
  // The transcript in wire form, for the next request (filled by BuildRequestLocked).
  llm::RequestCache request_cache_ ABSL_GUARDED_BY(mu_);
  llm::ToolOffer tool_offer_ ABSL_GUARDED_BY(mu_);  // the tools' order and cap (tool_offer.h)
  std::map<std::string, std::string> unasked_diffs_ ABSL_GUARDED_BY(mu_);  // call id -> diff
  SessionSaver saver_;  // thread-safe; queued under mu_, written by WriteSaves after it
  // Started under mu_ while not shutting down (StartTurnThreadLocked, which joins the one
  // before); once StopTurns set shutting_down_, only JoinTurnThread touches it.
  std::thread turn_thread_;
};

}  // namespace agent::daemon
