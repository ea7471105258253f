// Session: one conversation. What its clients see and what is saved of it (the transcript, and
// so the one rule; the queue; the event log; the save queue) is its SessionState; what runs
// its turns is its TurnRunner; the session is the commands (the RPCs' entry points) that reach
// both, and what both work with (the hooks, the checkpoints, the files the model read, the
// background jobs).
//
// daemon/session/ holds the session and the rooms it is spread over:
//   session.cc        the commands, attach/detach, shutdown
//   session_state.*   the state behind the session's mutex, one method per change a command or
//                     a turn may make (turn_state.cc: a turn's; state_saving.cc: saving;
//                     state_children.cc: the subagents'; compaction.cc: compaction's)
//   opening.*         how a session comes to be (new, loaded, forked): the disk read first
//   audience.*        the attached clients and the event log they hear
//   turn_runner.*     the turn thread and the session's side of each turn (TurnHost)
//   turn.*            the turn loop itself, behind TurnHost (turn_host.h): no session state
//   tool_dispatch.*   batching of one reply's calls, results in call order (the turn's host)
//   call_guard.*      the verdict on a call before it runs: hooks, the mode and rules
//                     (policy/call_policy.*), then a person
//   approval_gate.*   the one pending approval and the first answer that wins
//   checkpoints.cc, children.cc, trust.cc, hooks.cc, expand.cc: the session's side of
//                     daemon/checkpoints/, subagents/, policy/, hooks/ and prompt expansion
//   events.*          the events, built from plain values
//   saver.*, files.*  writes to disk, queued under the mutex and made after it is released
//   deferred_writes.* client writes started after the session's mutex is released
//
// The contract: a reader of every section under the state's mutex finds no I/O in it (no file,
// no fsync, no git, no process, no network): what needs the disk is read before the lock is
// taken, or queued and written once it is released, by the method that queued it.
//
// Threading: RPC handlers call the public methods from gRPC threads (or the service's disk
// workers); they never block on the model, a tool or the disk. The turn loop runs on a thread of
// its own (started when a prompt arrives, ended when the queue is empty) and holds no lock
// across the model request, tools or approval waits. Events are appended under the state's
// mutex, so a new subscriber's snapshot and the live events after it never overlap or leave a
// gap.
//
// Persistence (SessionSaver): each message is appended to the journal, the transcript is
// written whole at idle, compaction and shutdown, the meta file when a turn starts and ends.
// A save that fails (a full disk) is an Error event and a line in the daemon's log; the session
// keeps what is unsaved in memory, is never unloaded while it has some, retries (RetrySave),
// and its turn ends with an error that says so.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "common/transcript.h"
#include "daemon/checkpoints/checkpointer.h"
#include "daemon/context/session_context.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/policy/rule_source.h"
#include "daemon/prompt/prompt_expansion.h"
#include "daemon/prompt/system_prompt.h"
#include "daemon/session/approval_gate.h"
#include "daemon/session/editor_text.h"
#include "daemon/session/event_log.h"
#include "daemon/session/session_deps.h"
#include "daemon/session/session_state.h"
#include "daemon/store/store.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/file_tracker.h"

namespace agent::daemon {

// NotFound "session <id> was removed (agent rm); ...": what commands to a deleted session get.
absl::Status RemovedError(const std::string& id);

class TurnRunner;

class Session {
 public:
  // What opening.h (CreateSession, LoadSession, ForkSession) read from the disk for a session
  // about to exist; the constructor only takes it in and writes its first save.
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
  Opening ForkPoint(int at_message) const;

  const std::string& id() const { return state_.id(); }
  const std::string& workdir() const { return state_.workdir(); }
  agent::v1::Session Info() const { return state_.Info(); }
  std::string TranscriptJson() const { return state_.TranscriptJson(); }
  // A turn runs or waits, or messages are not on disk yet: not to be unloaded.
  bool Busy() const { return state_.Busy(); }
  // Background jobs (bash with background: true) run: a dev server is work in progress, so
  // not idle either; but unlike a turn they do not stop `agent rm`, which ends them.
  bool RunsBackgroundJobs() const { return jobs_.Running() > 0; }
  // Messages not on disk (a save failed): writes the transcript whole again. True when nothing
  // is left unsaved.
  bool RetrySave() { return state_.RetrySave(); }
  bool HasUnsaved() const { return state_.unsaved(); }
  // Why the last save failed (while HasUnsaved).
  absl::Status UnsavedError() const { return state_.unsaved_error(); }
  // Discarded unanswered (see Create): the manager forgets it.
  bool discarded() const { return state_.discarded(); }
  // The model connection the next request uses (the key included: memory only).
  ModelSettings model_settings() const { return state_.model_settings(); }

  // Registers `sub` and delivers, under the lock, either the events after (epoch, after_seq)
  // or a snapshot; live events follow. `client_name` shows in ClientsChanged. A client that
  // `serves_file_text` (an editor) is asked for files' unsaved text (editor_text.h).
  void Attach(Subscriber* sub, const std::string& client_name, bool read_only,
              const std::string& epoch, uint64_t after_seq, bool serves_file_text = false) {
    state_.Attach(sub, client_name, read_only, epoch, after_seq, serves_file_text);
  }
  // An editor's answer to a FileTextRequested (EditorText::Provide).
  absl::Status ProvideFileText(const std::string& request_id, bool found, std::string text) {
    return editor_text_.Provide(request_id, found, std::move(text));
  }
  void Detach(Subscriber* sub) { state_.Detach(sub); }
  // Delivers a fresh snapshot to a subscriber that fell too far behind.
  void Resync(Subscriber* sub) { state_.Resync(sub); }

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
                                 const agent::v1::ClientSettings& settings = {});
  // A prompt for the running turn: the model gets it as a user message at the turn's next
  // step, after that step's tool results (a UserPromptSubmit hook may refuse it then), and
  // every client sees a Steered event at each stage; a turn that ends before its next step
  // takes it as the next prompt. False, and nothing done, when no turn runs (or it is being
  // cancelled): the caller sends it as a prompt. The same refusals as SendPrompt.
  absl::StatusOr<bool> Steer(std::string text, const std::string& client,
                             PromptExpansion expansion = {}) {
    return state_.Steer({std::move(text), client, std::move(expansion), {}});
  }
  // `text` with its custom command and @mentions expanded for this project (session/expand.cc).
  PromptExpansion ExpandPrompt(std::string_view text) const;
  // A client's environment for tools, filtered by its policy (else the daemon config's);
  // replaces the session's unless `env` has no variables.
  void SetToolEnvironment(const agent::v1::ToolEnvironment& env);
  // FailedPrecondition when no approval with that id is pending (another client answered).
  absl::Status Approve(const std::string& call_id, agent::v1::Decision decision,
                       std::vector<std::string> rules, std::string reason,
                       const std::string& client) {
    return state_.Approve(call_id, {decision, std::move(rules), std::move(reason), client});
  }
  // Ends the running turn; returns whether one was running.
  absl::StatusOr<bool> Cancel(const std::string& client) { return state_.Cancel(client); }
  // Compacts now (blocks on the summary request). FailedPrecondition while a turn runs.
  absl::StatusOr<int> Compact();
  // Sets the policy mode (unless UNSPECIFIED) and records `add_allow` in the project's
  // settings; InvalidArgument for a malformed rule, and then nothing changes.
  // A change of mode is a PolicyChanged event naming `client`.
  absl::Status SetPolicy(agent::v1::PolicyMode mode, const std::vector<std::string>& add_allow,
                         const std::string& client = {}) ABSL_LOCKS_EXCLUDED(policy_mu_);
  // Switches the model of the next requests (an empty name changes nothing).
  void SetModel(const std::string& model) {
    if (!model.empty()) state_.SetModel(model);
  }
  // Cancels the turn, seals, saves and waits for the turn thread.
  void Shutdown(std::string_view reason);
  // The session was deleted (`agent rm` by `by_client`): attached clients get SessionRemoved,
  // then their streams end (OK); later commands are NotFound. Then Shutdown.
  void Remove(const std::string& by_client);
  // Ends the attached clients' streams with `status` after what they were sent (the daemon
  // is stopping).
  void EndStreams(const absl::Status& status) { state_.EndStreams(status); }

  int attached_clients() const { return state_.attached_clients(); }
  // The instruction files in the system message.
  std::vector<agent::v1::InstructionFile> InstructionFiles() const {
    return state_.InstructionFiles();
  }
  // What the next request is made of, in tokens (GetContext).
  agent::v1::ContextReport ContextReport() const {
    return state_.ContextReport(deps_.tools->Schemas(), deps_.config.context_tokens);
  }
  // Why gated tools are stopped (a rule file that does not parse), or OK.
  absl::Status RulesProblem() const { return rules_->Rules().status(); }
  // ---- trust.cc: project allow rules and a person's trust (policy/trusted_rules.h) ----
  // The notice about the project's allow rules nobody trusted (ignored), or empty.
  std::string UntrustedRulesNotice() const;

  // ---- checkpoints.cc: file checkpoints (daemon/checkpoints/) ----
  // Restores the files to before the last `turns` turns that changed them; the transcript
  // gets a note for the model and the clients a Notice. FailedPrecondition while a turn runs.
  absl::StatusOr<checkpoints::UndoResult> Undo(int turns, bool dry_run, bool overwrite,
                                               const std::string& client);
  // The same for every turn that began at or after message `at_message` (a rewind); with
  // files changed since, FailedPrecondition naming them and nothing is restored.
  absl::StatusOr<checkpoints::UndoResult> RestoreFilesFrom(int at_message,
                                                           const std::string& client);
  absl::StatusOr<std::string> FilesDiff(int turn) { return checkpointer().Diff(turn); }
  std::vector<checkpoints::CheckpointRecord> ListCheckpoints() { return checkpointer().List(); }

  // ---- Subagents (daemon/subagents/); session/children.cc ----
  // What a child of this session inherits now: mode, model, client settings, steps, cwd and
  // the tools' environment (the rules come with the project).
  SessionSettings InheritedSettings() const { return state_.Inherited(); }
  // Live events without being a client: no snapshot, not in ClientsChanged, not counted as
  // attached. `sub` must be removed before it dies.
  void AddObserver(Subscriber* sub) { state_.AddObserver(sub); }
  void RemoveObserver(Subscriber* sub) { state_.RemoveObserver(sub); }
  // Appends an event about a child (ChildProgress) to this session's stream.
  void PublishChildEvent(agent::v1::Event event) { state_.Publish(std::move(event)); }
  // A child's pending approval shown to this session's clients (ApprovalRequested with
  // child_session_id set; in snapshots; the state is waiting_approval) until
  // ChildApprovalResolved, which passes on the child's ApprovalResolved event (or none).
  void ForwardChildApproval(const agent::v1::PendingApproval& approval) {
    state_.ForwardChildApproval(approval);
  }
  void ChildApprovalResolved(const std::string& child_id, const std::string& call_id,
                             std::optional<agent::v1::Event> resolved) {
    state_.ChildApprovalResolved(child_id, call_id, std::move(resolved));
  }
  // The child session whose forwarded approval is `call_id`; empty when there is none.
  std::string ChildApprovalOwner(const std::string& call_id) const {
    return state_.ChildApprovalOwner(call_id);
  }
  // A child's usage added to this session's totals and to its running turn's.
  void AddChildUsage(const agent::v1::Usage& usage) { state_.AddChildUsage(usage); }
  // A child whose turn runs now: a later SetPolicy of this session reaches it (and its own
  // running children), so a person who tightens the mode mid-turn tightens it everywhere.
  // AddRunningChild also gives the child this session's mode of now (it may have changed
  // since the child was made).
  void AddRunningChild(const std::shared_ptr<Session>& child) ABSL_LOCKS_EXCLUDED(policy_mu_);
  void RemoveRunningChild(const Session* child) { state_.RemoveRunningChild(child); }

 private:
  // ---- checkpoints.cc ----
  checkpoints::Checkpointer& checkpointer();
  // Runs `restore` with no turn running (prompts sent meanwhile wait), then notes the result.
  absl::StatusOr<checkpoints::UndoResult> RestoreFiles(
      const std::function<absl::StatusOr<checkpoints::UndoResult>()>& restore,
      const std::string& client);
  // ---- hooks.cc ----
  std::unique_ptr<hooks::SessionHooks> MakeHooks();
  // `env` filtered by the policy it carries, else the daemon config's; nullopt when empty.
  std::optional<std::vector<std::string>> FilterToolEnvironment(
      const agent::v1::ToolEnvironment& env) const;

  SessionDeps deps_;
  SessionState state_;
  tools::BackgroundJobs jobs_;  // thread-safe on its own
  EditorText editor_text_;      // thread-safe on its own
  SessionLock lock_;
  std::shared_ptr<policy::RuleSource> rules_;
  // Held while a mode is set here and passed to the running children (taken parent before
  // child, never the other way), so a child starting meanwhile cannot get the old mode back.
  agent::Mutex policy_mu_;
  std::once_flag checkpointer_once_;
  std::unique_ptr<checkpoints::Checkpointer> checkpointer_;  // set once, then thread-safe
  std::unique_ptr<hooks::SessionHooks> hooks_;               // set once in the constructor
  std::unique_ptr<TurnRunner> turns_;                        // the same, after hooks_
};

}  // namespace agent::daemon
