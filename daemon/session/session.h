// Session: one conversation. Owns its transcript (and so the one rule), its event log, its
// prompt queue and the thread that answers the prompts: prompt → model → tools → … → idle.
//
// daemon/session/ holds the session and the rooms it is spread over:
//   session.cc        state, commands (the RPCs' entry points), attach/detach, saving
//   opening.*         how a session comes to be (new, loaded, forked): the disk read first
//   audience.*        the attached clients and the event log they hear
//   turn_runner.*     the turn thread and the session's side of each turn (TurnHost), the
//                     reply as it streams; compaction.cc its compaction, call_host.cc its side
//                     of the CallGuard
//   turn.*            the turn loop itself, behind TurnHost (turn_host.h): no session state
//   tool_dispatch.*   batching of one reply's calls, results in call order (the Turn is its Host)
//   call_guard.*      the verdict on a call before it runs: hooks, the mode and rules
//                     (call_policy.*), then a person
//   approval_gate.*   the one pending approval and the first answer that wins
//   context.cc, checkpoints.cc, children.cc, trust.cc, hooks.cc, expand.cc: the session's
//                     side of daemon/context/, checkpoints/, subagents/, policy/, hooks/ and
//                     prompt expansion
//   events.*          the events, built from plain values
//   saver.*, files.*  writes to disk after `mu_` is released, through the disk seam
//   deferred_writes.* client writes (and saves) started after the session's mutex is released
//
// The contract: a reader of every `mu_` section finds no I/O in it (no file, no fsync, no git,
// no process, no network): what needs the disk is read before the lock is taken or queued and
// written once it is released.
//
// Threading: `mu_` guards all state. RPC handlers call the public methods from gRPC threads;
// they take `mu_` briefly and never block on the model, a tool or the disk. The turn loop runs on a
// thread of its own (started when a prompt arrives, ended when the queue is empty) and
// releases `mu_` around every blocking call: the model request, tools, approval waits.
// Events are appended under `mu_`, so a new subscriber's snapshot and the live events after it
// never overlap or leave a gap; the writes to clients start once `mu_` is released
// (SessionMutexLock).
//
// Persistence (SessionSaver): each message is appended to the journal, the transcript is
// written whole at idle, compaction and shutdown, the meta file when a turn starts and ends.
// The writes are queued under `mu_` and made once it is released, so no save holds the lock. A
// save that fails (a full disk) is an Error event and a line in the daemon's log; the session
// keeps what is unsaved in memory, is never unloaded while it has some, retries (RetrySave),
// and its turn ends with an error that says so.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
#include "common/protocol.h"
#include "common/transcript.h"
#include "daemon/checkpoints/checkpointer.h"
#include "daemon/context/session_context.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/llm/model_client.h"
#include "daemon/policy/call_policy.h"
#include "daemon/policy/rule_source.h"
#include "daemon/prompt/prompt_expansion.h"
#include "daemon/prompt/system_prompt.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/session/approval_gate.h"
#include "daemon/session/audience.h"
#include "daemon/session/call_guard.h"
#include "daemon/session/editor_text.h"
#include "daemon/session/event_log.h"
#include "daemon/session/events.h"
#include "daemon/session/files.h"
#include "daemon/session/saver.h"
#include "daemon/session/tool_dispatch.h"
#include "daemon/session/turn_settings.h"
#include "daemon/store/store.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/file_tracker.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon {

// What a session needs from outside, passed in so tests can replace the model and the clock.
struct SessionDeps {
  std::string epoch;
  const tools::ToolRegistry* tools = nullptr;
  // When set, the tools of each model request instead of `tools` (the daemon's: the core tools
  // and the project's MCP tools, daemon/mcp/registry.h); `report` shows a problem to clients.
  std::function<std::shared_ptr<const tools::ToolRegistry>(
      const std::string& workdir, const std::string& session_id, const std::atomic<bool>* cancelled,
      const std::function<void(const std::string&)>& report)>
      tools_for;
  std::function<std::unique_ptr<llm::ModelClient>()> make_model_client;
  Config config;  // daemon defaults: thresholds, timeouts
  const Clock* clock = Clock::Real();
  // The permission rules of the project in `workdir`, asked for once per session (the
  // daemon's: policy::FileRuleSource over config.json and .agent/settings.json). Unset: no
  // rules.
  std::function<std::shared_ptr<policy::RuleSource>(const std::string& workdir)> rules_for;
  // Where file checkpoints are stored (checkpoints::StoresRoot() in the daemon); empty: the
  // session takes none.
  std::string checkpoint_stores;
  // The session's files (the disk seam); unset: DiskSessionFiles.
  std::function<std::unique_ptr<SessionFiles>(const std::string& workdir, const std::string& id)>
      files_for;
  // How commands are confined (daemon/sandbox/sandbox.h); null: not at all (tests).
  std::shared_ptr<const sandbox::Sandbox> sandbox;
  // Where the hooks of the project in `workdir` are read (hooks::DefaultHookFiles in the
  // daemon). Unset: no hooks.
  std::function<hooks::HookFiles(const std::string& workdir)> hook_files;
  // Called by the SessionManager, outside every lock, when a loaded session was deleted,
  // discarded or unloaded: what the daemon keeps for it elsewhere (an editor's MCP servers,
  // mcp::Registry::EndSession) can go. Unset: nothing to do.
  std::function<void(const std::string& session_id)> session_ended;
};

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

// NotFound "session <id> was removed (agent rm); ...": what commands to a deleted session get.
absl::Status RemovedError(const std::string& id);

class TurnRunner;

class Session {
 public:
  // What opening.h (CreateSession, LoadSession, ForkSession) read from the disk for a session
  // about to exist; the constructor only takes it in, under the lock, and queues its first save.
  struct Opening {
    std::string workdir;
    SessionMeta meta;
    Transcript transcript;
    SessionSettings settings;
    SessionLock lock;
    enum class Kind { kNew, kLoaded, kForked } kind = Kind::kNew;
    // Loaded, forked or a child: kept even when nobody is attached (see CreateSession).
    bool answered = true;
    enum class Write { kNothing, kAll, kMetaOnly } write = Write::kAll;
    BuiltSystemPrompt prompt;  // kNew: what the system message was built from
    context::PriceTable prices;
    std::string notice;  // for the clients with the first turn
  };
  Session(Opening opening, SessionDeps deps);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The state a fork starts from: this transcript (its first `at_message` messages, 0 = all,
  // calls still running sealed), settings and meta (opening.h ForkSession).
  Opening ForkPoint(int at_message) const ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& id() const { return id_; }
  const std::string& workdir() const { return workdir_; }
  agent::v1::Session Info() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string TranscriptJson() const ABSL_LOCKS_EXCLUDED(mu_);
  // A turn runs or waits, or messages are not on disk yet: not to be unloaded.
  bool Busy() const ABSL_LOCKS_EXCLUDED(mu_);
  // Background jobs (bash with background: true) run: a dev server is work in progress, so
  // not idle either; but unlike a turn they do not stop `agent rm`, which ends them.
  bool RunsBackgroundJobs() const { return jobs_.Running() > 0; }
  // Messages not on disk (a save failed): writes the transcript whole again. True when nothing
  // is left unsaved.
  bool RetrySave() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasUnsaved() const { return saver_.unsaved(); }
  // Why the last save failed (while HasUnsaved).
  absl::Status UnsavedError() const { return saver_.last_error(); }
  // Discarded unanswered (see Create): the manager forgets it.
  bool discarded() const ABSL_LOCKS_EXCLUDED(mu_);
  // The model connection the next request uses (the key included: memory only).
  ModelSettings model_settings() const ABSL_LOCKS_EXCLUDED(mu_);

  // Registers `sub` and delivers, under the lock, either the events after (epoch, after_seq)
  // or a snapshot; live events follow. `client_name` shows in ClientsChanged. A client that
  // `serves_file_text` (an editor) is asked for files' unsaved text (editor_text.h).
  void Attach(Subscriber* sub, const std::string& client_name, bool read_only,
              const std::string& epoch, uint64_t after_seq, bool serves_file_text = false)
      ABSL_LOCKS_EXCLUDED(mu_);
  // An editor's answer to a FileTextRequested (EditorText::Provide).
  absl::Status ProvideFileText(const std::string& request_id, bool found, std::string text) {
    return editor_text_.Provide(request_id, found, std::move(text));
  }
  void Detach(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers a fresh snapshot to a subscriber that fell too far behind.
  void Resync(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);

  // Queues a prompt; returns its position (0: it starts now). Once the prompt is accepted,
  // the non-empty fields of `model` replace the session's model settings and a non-empty
  // `tool_env` the tools' environment (in memory only: the key is never saved); a refused
  // prompt changes nothing. `expansion` (ExpandPrompt's) is what the transcript gets instead
  // of `text`. The turn the prompt starts runs with `settings` (set fields), then the
  // session's, then the daemon's (turn_settings.h).
  absl::StatusOr<int> SendPrompt(std::string text, const std::string& client,
                                 const ModelSettings& model = {},
                                 const agent::v1::ToolEnvironment& tool_env = {},
                                 PromptExpansion expansion = {},
                                 const agent::v1::ClientSettings& settings = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // A prompt for the running turn: the model gets it as a user message at the turn's next
  // step, after that step's tool results (a UserPromptSubmit hook may refuse it then), and
  // every client sees a Steered event at each stage; a turn that ends before its next step
  // takes it as the next prompt. False, and nothing done, when no turn runs (or it is being
  // cancelled): the caller sends it as a prompt. The same refusals as SendPrompt.
  absl::StatusOr<bool> Steer(std::string text, const std::string& client,
                             PromptExpansion expansion = {}) ABSL_LOCKS_EXCLUDED(mu_);
  // `text` with its custom command and @mentions expanded for this project (session/expand.cc).
  PromptExpansion ExpandPrompt(std::string_view text) const;
  // A client's environment for tools, filtered by its policy (else the daemon config's);
  // replaces the session's unless `env` has no variables.
  void SetToolEnvironment(const agent::v1::ToolEnvironment& env) ABSL_LOCKS_EXCLUDED(mu_);
  // FailedPrecondition when no approval with that id is pending (another client answered).
  absl::Status Approve(const std::string& call_id, agent::v1::Decision decision,
                       std::vector<std::string> rules, std::string reason,
                       const std::string& client) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the running turn; returns whether one was running.
  absl::StatusOr<bool> Cancel(const std::string& client) ABSL_LOCKS_EXCLUDED(mu_);
  // Compacts now (blocks on the summary request). FailedPrecondition while a turn runs.
  absl::StatusOr<int> Compact() ABSL_LOCKS_EXCLUDED(mu_);
  // Sets the policy mode (unless UNSPECIFIED) and records `add_allow` in the project's
  // settings; InvalidArgument for a malformed rule, and then nothing changes.
  // A change of mode is a PolicyChanged event naming `client`.
  absl::Status SetPolicy(agent::v1::PolicyMode mode, const std::vector<std::string>& add_allow,
                         const std::string& client = {}) ABSL_LOCKS_EXCLUDED(mu_);
  // Switches the model of the next requests (an empty name changes nothing).
  void SetModel(const std::string& model) ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels the turn, seals, saves and waits for the turn thread.
  void Shutdown(std::string_view reason) ABSL_LOCKS_EXCLUDED(mu_);
  // The session was deleted (`agent rm` by `by_client`): attached clients get SessionRemoved,
  // then their streams end (OK); later commands are NotFound. Then Shutdown.
  void Remove(const std::string& by_client) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the attached clients' streams with `status` after what they were sent (the daemon
  // is stopping).
  void EndStreams(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  int attached_clients() const ABSL_LOCKS_EXCLUDED(mu_);
  // The instruction files in the system message (session/context.cc).
  std::vector<agent::v1::InstructionFile> InstructionFiles() const ABSL_LOCKS_EXCLUDED(mu_);
  // What the next request is made of, in tokens (GetContext).
  agent::v1::ContextReport ContextReport() const ABSL_LOCKS_EXCLUDED(mu_);
  // Why gated tools are stopped (a rule file that does not parse), or OK.
  absl::Status RulesProblem() const;
  // ---- trust.cc: project allow rules and a person's trust (policy/trusted_rules.h) ----
  // The notice about the project's allow rules nobody trusted (ignored), or empty.
  std::string UntrustedRulesNotice() const;

  // ---- checkpoints.cc: file checkpoints (daemon/checkpoints/) ----
  // Restores the files to before the last `turns` turns that changed them; the transcript
  // gets a note for the model and the clients a Notice. FailedPrecondition while a turn runs.
  absl::StatusOr<checkpoints::UndoResult> Undo(int turns, bool dry_run, bool overwrite,
                                               const std::string& client) ABSL_LOCKS_EXCLUDED(mu_);
  // The same for every turn that began at or after message `at_message` (a rewind); with
  // files changed since, FailedPrecondition naming them and nothing is restored.
  absl::StatusOr<checkpoints::UndoResult> RestoreFilesFrom(int at_message,
                                                           const std::string& client)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::string> FilesDiff(int turn) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<checkpoints::CheckpointRecord> ListCheckpoints() ABSL_LOCKS_EXCLUDED(mu_);
  // ---- Hooks for subagents (daemon/subagents/); session/children.cc ----
  // What a child of this session inherits now: mode, model, client settings, steps, cwd and
  // the tools' environment (the rules come with the project).
  SessionSettings InheritedSettings() const ABSL_LOCKS_EXCLUDED(mu_);
  // Live events without being a client: no snapshot, not in ClientsChanged, not counted as
  // attached. `sub` must be removed before it dies.
  void AddObserver(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveObserver(Subscriber* sub) ABSL_LOCKS_EXCLUDED(mu_);
  // Appends an event about a child (ChildProgress) to this session's stream.
  void PublishChildEvent(agent::v1::Event event) ABSL_LOCKS_EXCLUDED(mu_);
  // A child's pending approval shown to this session's clients (ApprovalRequested with
  // child_session_id set; in snapshots; the state is waiting_approval) until
  // ChildApprovalResolved, which passes on the child's ApprovalResolved event (or none).
  void ForwardChildApproval(const agent::v1::PendingApproval& approval) ABSL_LOCKS_EXCLUDED(mu_);
  void ChildApprovalResolved(const std::string& child_id, const std::string& call_id,
                             std::optional<agent::v1::Event> resolved) ABSL_LOCKS_EXCLUDED(mu_);
  // The child session whose forwarded approval is `call_id`; empty when there is none.
  std::string ChildApprovalOwner(const std::string& call_id) const ABSL_LOCKS_EXCLUDED(mu_);
  // A child's usage added to this session's totals and to its running turn's.
  void AddChildUsage(const agent::v1::Usage& usage) ABSL_LOCKS_EXCLUDED(mu_);
  // A child whose turn runs now: a later SetPolicy of this session reaches it (and its own
  // running children), so a person who tightens the mode mid-turn tightens it everywhere.
  // AddRunningChild also gives the child this session's mode of now (it may have changed
  // since the child was made).
  void AddRunningChild(const std::shared_ptr<Session>& child) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveRunningChild(const Session* child) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct QueuedPrompt {
    std::string text;
    std::string client;
    PromptExpansion expansion;
    agent::v1::ClientSettings settings;  // what the sending client set
  };
  friend class TurnRunner;  // the session's side of its turns (turn_runner.h)

  // Why a prompt from `client` cannot be taken now (read-only, removed, shutting down, empty).
  absl::Status CheckPromptLocked(const std::string& client, const std::string& text,
                                 const PromptExpansion& expansion) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the turn thread (TurnRunner::Main) unless it runs; it takes prompts until the queue
  // is empty.
  void StartTurnThreadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- context.cc: system prompt, instructions, usage ----
  // Takes in what opening.h read: the context's prompt, prices and notice, or the saved ones.
  void OpenContextLocked(Opening& opening) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void BeginTurnContextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::Event TurnEndedEventLocked(agent::v1::TurnOutcome outcome, const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts a rebuilt system message (fresh instruction files) in place of the first message;
  // `changed_since_seen`: MarkInstructionsSeen (called without the lock) said they changed.
  void RefreshSystemPromptLocked(const BuiltSystemPrompt& prompt, bool changed_since_seen)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- checkpoints.cc ----
  checkpoints::Checkpointer& checkpointer();
  // Runs `restore` with no turn running (prompts sent meanwhile wait), then notes the result.
  absl::StatusOr<checkpoints::UndoResult> RestoreFiles(
      const std::function<absl::StatusOr<checkpoints::UndoResult>()>& restore,
      const std::string& client) ABSL_LOCKS_EXCLUDED(mu_);
  void NoticeLocked(std::string text) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- hooks.cc: the hooks (daemon/hooks/); a turn fires them (TurnRunner) ----
  std::unique_ptr<hooks::SessionHooks> MakeHooks();

  // ---- trust.cc ----
  // Tells the clients about untrusted project allow rules when the set differs from the one
  // told last (so once per session while nothing changes).
  void AnnounceUntrustedRulesLocked(std::vector<std::string> untrusted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- session.cc ----
  void Emit(agent::v1::Event event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    audience_.Emit(std::move(event));
  }
  // Releases `mu_` for a moment so the client writes queued so far start (before a wait).
  void StartDeferredWritesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the transcript and, unless kTranscriptOnly, the meta file. Saves inside a turn
  // are transcript-only: the meta file (what `agent ls` shows of a session not loaded) is
  // written when a turn starts and ends, and a load recounts what it may have missed.
  // kWhole writes the transcript whole (at idle, shutdown); the others append to its journal.
  enum class Save { kAll, kTranscriptOnly, kMetaOnly, kWhole };
  void SaveLocked(Save what = Save::kAll) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The saver's report of a write (no lock held): the log, and the clients once per failure run.
  void OnSaveResult(const SessionSaver::Outcome& outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes the files of a session the model never answered once it is idle and detached
  // (see CreateSession); it stays discarded.
  void DiscardIfUnansweredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::Event SnapshotLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::Session InfoLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  agent::v1::SessionState StateLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `env` filtered by the policy it carries, else the daemon config's; nullopt when empty.
  std::optional<std::vector<std::string>> FilterToolEnvironment(
      const agent::v1::ToolEnvironment& env) const;
  int64_t NowMs() const { return deps_.clock->NowMs(); }

  const std::string workdir_;
  const std::string id_;
  SessionDeps deps_;
  tools::FileTracker files_;
  tools::BackgroundJobs jobs_;  // thread-safe on its own; never under mu_
  EditorText editor_text_;      // thread-safe on its own; asked without mu_
  SessionLock lock_;
  std::atomic<bool> cancelled_{false};
  std::shared_ptr<policy::RuleSource> rules_;

  mutable agent::Mutex mu_;
  // Held while a mode is set here and passed to the running children (taken parent before
  // child, never the other way), so a child starting meanwhile cannot get the old mode back.
  agent::Mutex policy_mu_ ABSL_ACQUIRED_BEFORE(mu_);
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
  // Steered into the running turn, not taken yet (TurnRunner::LandSteers).
  std::deque<QueuedPrompt> steers_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // the turn thread is alive
  bool in_turn_ ABSL_GUARDED_BY(mu_) = false;  // it took a prompt and has not ended its turn
  // Cancel came while the thread was between turns, taking the next prompt: that turn starts
  // cancelled (the person pressed Ctrl-C at what was about to run).
  bool cancel_next_ ABSL_GUARDED_BY(mu_) = false;
  bool compacting_ ABSL_GUARDED_BY(mu_) = false;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool removed_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // Shutdown saved it
  std::string partial_text_ ABSL_GUARDED_BY(mu_);
  std::string partial_reasoning_ ABSL_GUARDED_BY(mu_);
  bool save_failed_ ABSL_GUARDED_BY(mu_) = false;  // told to the clients
  SessionSaver saver_;  // thread-safe; queued under mu_, written after it
  std::vector<std::string> untrusted_told_ ABSL_GUARDED_BY(mu_);  // AnnounceUntrustedRules…
  context::SessionContext ctx_ ABSL_GUARDED_BY(mu_);
  events::TurnTally tally_ ABSL_GUARDED_BY(mu_);  // of the turn running
  std::once_flag checkpointer_once_;
  std::unique_ptr<checkpoints::Checkpointer> checkpointer_;  // set once, then thread-safe
  std::vector<agent::v1::PendingApproval> child_approvals_ ABSL_GUARDED_BY(mu_);  // forwarded
  std::vector<std::weak_ptr<Session>> running_children_ ABSL_GUARDED_BY(mu_);
  std::thread turn_thread_;                     // joined before a new one starts and in Shutdown
  std::unique_ptr<TurnRunner> turns_;           // set once in the constructor
  std::unique_ptr<hooks::SessionHooks> hooks_;  // the same
  std::unique_ptr<CallGuard> guard_;            // the same, after both (turns_ is its Host)
};

}  // namespace agent::daemon
