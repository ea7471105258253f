// SessionState (session_state.h): queries, clients and commands. What a turn changes is in
// turn_state.cc, saving in state_saving.cc, the subagents' share in state_children.cc,
// compaction's in compaction.cc.
#include "daemon/session/session_state.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/context/context_report.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/session.h"

namespace agent::daemon {
namespace v1 = agent::v1;

SessionState::SessionState(Init init)
    : workdir_(std::move(init.workdir)),
      id_(init.meta.id),
      clock_(init.clock),
      config_(init.config),
      sandbox_(std::move(init.sandbox)),
      meta_(std::move(init.meta)),
      answered_(init.answered),
      transcript_(std::move(init.transcript)),
      settings_(std::move(init.settings)),
      audience_(std::move(init.epoch), init.clock),
      saver_(std::move(init.files),
             [this](const SessionSaver::Outcome& outcome) { OnSaveResult(outcome); }) {}

SessionState::~SessionState() { JoinTurnThread(); }

void SessionState::Open(bool is_new, bool forked, const BuiltSystemPrompt& prompt,
                        context::PriceTable prices, const std::string& notice, FirstWrite write) {
  {
    SessionMutexLock l(&mu_);
    if (is_new) {
      ctx_.SetPrompt(prompt.instructions, prompt.base_chars, prompt.text.size());
    } else {
      ctx_.LoadJson(meta_.context);
      if (forked) ctx_.usage = context::UsageMeter();  // its own use
      files_.LoadJson(meta_.files_seen, workdir_);
    }
    ctx_.prices = std::move(prices);
    if (!notice.empty()) {
      absl::StrAppend(&ctx_.pending_notice, ctx_.pending_notice.empty() ? "" : "\n", notice);
    }
    if (write == FirstWrite::kAll) SaveLocked();
    if (write == FirstWrite::kMetaOnly) SaveLocked(Save::kMetaOnly);
  }
  WriteSaves();
}

// ---- Queries ----------------------------------------------------------------------------------

v1::SessionState SessionState::StateLocked() const {
  if (gate_.pending() != nullptr || !child_approvals_.empty()) {
    return v1::SESSION_STATE_WAITING_APPROVAL;
  }
  if (running_ || held_) return v1::SESSION_STATE_RUNNING;
  return v1::SESSION_STATE_IDLE;
}

v1::Session SessionState::InfoLocked() const {
  v1::Session info;
  info.set_id(meta_.id);
  info.set_workdir(workdir_);
  info.set_title(meta_.title);
  info.set_model(settings_.model.model);
  info.set_state(StateLocked());
  info.set_attached_clients(audience_.size());
  info.set_created_unix_ms(meta_.created_unix_ms);
  info.set_updated_unix_ms(meta_.updated_unix_ms);
  info.set_message_count(static_cast<int>(transcript_.size()));
  info.set_parent_id(meta_.parent_id);
  info.set_policy(settings_.policy);
  info.set_cwd(meta_.cwd);
  info.set_agent(meta_.agent);
  info.set_depth(meta_.depth);
  *info.mutable_usage() = ctx_.usage.session();
  if (!sandbox_.empty()) info.set_sandbox(sandbox_);
  return info;
}

v1::Session SessionState::Info() const {
  SessionMutexLock l(&mu_);
  return InfoLocked();
}

std::string SessionState::TranscriptJson() const {
  SessionMutexLock l(&mu_);
  return transcript_.FileText();
}

ModelSettings SessionState::model_settings() const {
  SessionMutexLock l(&mu_);
  return settings_.model;
}

v1::PolicyMode SessionState::mode() const {
  SessionMutexLock l(&mu_);
  return settings_.policy;
}

std::string SessionState::cwd() const {
  SessionMutexLock l(&mu_);
  return meta_.cwd;
}

bool SessionState::discarded() const {
  SessionMutexLock l(&mu_);
  return discarded_;
}

bool SessionState::Busy() const {
  if (saver_.unsaved()) return true;
  SessionMutexLock l(&mu_);
  return running_ || held_ || !queue_.empty();
}

int SessionState::attached_clients() const {
  SessionMutexLock l(&mu_);
  return audience_.size();
}

std::vector<v1::InstructionFile> SessionState::InstructionFiles() const {
  SessionMutexLock l(&mu_);
  return ctx_.instructions;
}

v1::ContextReport SessionState::ContextReport(const std::vector<Json>& tool_schemas,
                                              int64_t context_tokens) const {
  SessionMutexLock l(&mu_);
  return context::BuildContextReport(ctx_, transcript_.messages(), tool_schemas, context_tokens);
}

void SessionState::CopyForFork(Transcript* transcript, SessionSettings* settings,
                               SessionMeta* meta) const {
  SessionMutexLock l(&mu_);
  *transcript = transcript_;
  *settings = settings_;
  *meta = meta_;
  meta->files_seen = files_.ToJson();  // what the model read so far, not as last saved
}

hooks::HookContext SessionState::HookContext() const {
  SessionMutexLock l(&mu_);
  return hooks::HookContext{hooks::PermissionModeName(settings_.policy), settings_.tool_env,
                            workdir_};
}

bool SessionState::is_child() const {
  SessionMutexLock l(&mu_);
  return !meta_.parent_id.empty();
}

bool SessionState::resumed() const {
  SessionMutexLock l(&mu_);
  return transcript_.size() > 1;  // more than the system message: loaded or forked
}

v1::Event SessionState::SnapshotLocked() const {
  v1::Event e;
  e.set_seq(audience_.last_seq());
  e.set_epoch(audience_.epoch());
  e.set_unix_ms(NowMs());
  auto* snap = e.mutable_snapshot();
  snap->set_transcript_json(transcript_.FileText());  // from the cache: no re-serialising
  snap->set_state(StateLocked());
  if (const v1::PendingApproval* a = gate_.pending(); a != nullptr) {
    *snap->mutable_pending_approval() = *a;
  } else if (!child_approvals_.empty()) {
    *snap->mutable_pending_approval() = child_approvals_.front();
  }
  for (const QueuedPrompt& p : queue_) snap->add_queued_prompts(p.text);
  for (const QueuedPrompt& p : steers_) {
    *snap->add_pending_steers() = events::Steered(p.text, p.client, v1::Steered::PENDING).steered();
  }
  for (const std::string& name : audience_.names()) snap->add_clients(name);
  *snap->mutable_session() = InfoLocked();
  snap->set_partial_text(partial_text_);
  snap->set_partial_reasoning(partial_reasoning_);
  if (ctx_.plan.has_value()) *snap->mutable_plan() = *ctx_.plan;
  return e;
}

// ---- Clients and events -----------------------------------------------------------------------

void SessionState::Attach(Subscriber* sub, const std::string& client_name, bool read_only,
                          const std::string& epoch, uint64_t after_seq, bool serves_file_text) {
  {
    SessionMutexLock l(&mu_);
    audience_.Attach(sub, client_name, read_only, serves_file_text, epoch, after_seq,
                     [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return SnapshotLocked(); });
  }
}

void SessionState::Detach(Subscriber* sub) {
  bool dropped = false;
  {
    SessionMutexLock l(&mu_);
    if (audience_.Detach(sub)) DiscardIfUnansweredLocked();
    dropped = discarded_;
  }
  if (dropped) WriteSaves();  // a discarded session's files are deleted here
}

void SessionState::Resync(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  sub->Deliver(std::make_shared<const v1::Event>(SnapshotLocked()));
}

void SessionState::AddObserver(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  audience_.AddObserver(sub);
}

void SessionState::RemoveObserver(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  audience_.RemoveObserver(sub);
}

void SessionState::EndStreams(const absl::Status& status) {
  SessionMutexLock l(&mu_);
  audience_.EndAll(status);
}

bool SessionState::AskEditor(const v1::Event& event) {
  SessionMutexLock l(&mu_);
  return audience_.AskEditor(event);
}

void SessionState::Publish(v1::Event event) {
  SessionMutexLock l(&mu_);
  Emit(std::move(event));
}

void SessionState::Notice(std::string text) {
  SessionMutexLock l(&mu_);
  NoticeLocked(std::move(text));
}

void SessionState::Error(std::string text) {
  SessionMutexLock l(&mu_);
  Emit(events::Error(text));
}

void SessionState::NoticeLocked(std::string text) {
  v1::Event e;
  e.mutable_notice()->set_text(std::move(text));
  Emit(std::move(e));
}

void SessionState::AnnounceUntrustedRulesLocked(std::vector<std::string> untrusted) {
  if (untrusted == untrusted_told_) return;
  untrusted_told_ = std::move(untrusted);
  if (untrusted_told_.empty()) return;
  NoticeLocked(policy::UntrustedRulesNotice(ProjectSettingsPath(workdir_), untrusted_told_));
}

// The analysis cannot follow a lock released and taken again inside one function.
void SessionState::StartDeferredWritesLocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  mu_.Unlock();
  RunDeferredWrites();
  mu_.Lock();
}

// ---- Commands ---------------------------------------------------------------------------------

absl::Status SessionState::CheckPrompt(const std::string& client, const std::string& text,
                                       const PromptExpansion& expansion) const {
  SessionMutexLock l(&mu_);
  return CheckPromptLocked(client, text, expansion);
}

absl::Status SessionState::CheckPromptLocked(const std::string& client, const std::string& text,
                                             const PromptExpansion& expansion) const {
  if (audience_.IsReadOnly(client)) {
    return absl::PermissionDeniedError("a read-only observer cannot send prompts");
  }
  if (removed_) return RemovedError(id_);
  if (discarded_) {
    return absl::NotFoundError(absl::StrCat(
        "session ", id_, " was discarded: the model never answered it and no client was left"));
  }
  if (shutting_down_) return absl::UnavailableError("the daemon is shutting down");
  if (text.empty() && expansion.image_urls.empty()) {
    return absl::InvalidArgumentError("empty prompt");
  }
  return absl::OkStatus();
}

void SessionState::StartTurnThreadLocked() {
  if (running_) return;
  // The previous turn thread has finished: running_ is false only after its last lock.
  if (turn_thread_.joinable()) turn_thread_.join();
  running_ = true;
  turn_thread_ = std::thread(turn_body_);
}

void SessionState::JoinTurnThread() {
  if (turn_thread_.joinable()) turn_thread_.join();
}

absl::StatusOr<int> SessionState::Enqueue(QueuedPrompt prompt, const ModelSettings& model,
                                          std::optional<std::vector<std::string>> tool_env) {
  SessionMutexLock l(&mu_);
  if (absl::Status s = CheckPromptLocked(prompt.client, prompt.text, prompt.expansion); !s.ok()) {
    return s;
  }
  settings_.model = MergeModelSettings(model, settings_.model);
  if (tool_env.has_value()) settings_.tool_env = *std::move(tool_env);
  queue_.push_back(std::move(prompt));
  int position = static_cast<int>(queue_.size()) - 1 + (in_turn_ ? 1 : 0);
  if (!held_) StartTurnThreadLocked();
  return position;
}

absl::StatusOr<bool> SessionState::Steer(QueuedPrompt steer) {
  SessionMutexLock l(&mu_);
  if (absl::Status s = CheckPromptLocked(steer.client, steer.text, steer.expansion); !s.ok()) {
    return s;
  }
  if (!in_turn_ || cancelled_) return false;
  Emit(events::Steered(steer.text, steer.client, v1::Steered::PENDING));
  steers_.push_back(std::move(steer));
  return true;
}

absl::Status SessionState::Approve(const std::string& call_id, ApprovalGate::Answer answer) {
  SessionMutexLock l(&mu_);
  if (audience_.IsReadOnly(answer.client)) {
    return absl::PermissionDeniedError("a read-only observer cannot answer approvals");
  }
  return gate_.Resolve(call_id, std::move(answer));
}

absl::StatusOr<bool> SessionState::Cancel(const std::string& client) {
  SessionMutexLock l(&mu_);
  if (audience_.IsReadOnly(client)) {
    return absl::PermissionDeniedError("a read-only observer cannot cancel");
  }
  if (!running_) return false;
  cancelled_ = true;
  if (!in_turn_) cancel_next_ = true;
  if (tally_.cancelled_by.empty()) tally_.cancelled_by = client;
  gate_.Wake();
  return true;
}

std::vector<std::shared_ptr<Session>> SessionState::SetMode(v1::PolicyMode mode,
                                                            const std::string& client) {
  SessionMutexLock l(&mu_);
  if (settings_.policy != mode) {  // every client shows the change and who made it
    v1::Event changed;
    changed.mutable_policy_changed()->set_mode(mode);
    changed.mutable_policy_changed()->set_client_name(client);
    Emit(std::move(changed));
  }
  settings_.policy = mode;
  std::vector<std::shared_ptr<Session>> children;
  for (const std::weak_ptr<Session>& w : running_children_) {
    if (std::shared_ptr<Session> c = w.lock()) children.push_back(std::move(c));
  }
  return children;
}

void SessionState::SetModel(const std::string& model) {
  SessionMutexLock l(&mu_);
  settings_.model.model = model;
}

void SessionState::SetToolEnvironment(std::vector<std::string> env) {
  SessionMutexLock l(&mu_);
  settings_.tool_env = std::move(env);
}

absl::Status SessionState::HoldTurns(const std::optional<std::string>& client,
                                     const std::string& what) {
  SessionMutexLock l(&mu_);
  if (client.has_value()) {
    if (audience_.IsReadOnly(*client)) {
      return absl::PermissionDeniedError(
          absl::StrCat("a read-only observer cannot ", what, " files"));
    }
    if (removed_) return RemovedError(id_);
  }
  if (running_ || held_ || (client.has_value() && !queue_.empty())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a turn is running; ", what, client.has_value() ? " the files" : "", " when it is done"));
  }
  held_ = true;
  return absl::OkStatus();
}

void SessionState::ReleaseTurns(const std::string& note, const std::string& notice) {
  {
    SessionMutexLock l(&mu_);
    held_ = false;
    // Idle: the transcript ends with an answered turn, so a user message keeps the rule.
    if (!note.empty() && transcript_.AppendUser(note).ok()) SaveLocked();
    if (!notice.empty()) NoticeLocked(notice);
    // Prompts sent meanwhile waited for it.
    if (!queue_.empty() && !shutting_down_) StartTurnThreadLocked();
  }
  WriteSaves();
}

void SessionState::MarkRemoved(const std::string& by_client) {
  SessionMutexLock l(&mu_);
  removed_ = true;
  v1::Event e;
  e.mutable_session_removed()->set_client_name(by_client);
  Emit(std::move(e));
  audience_.EndAll(absl::OkStatus());
}

void SessionState::StopTurns() {
  SessionMutexLock l(&mu_);
  shutting_down_ = true;
  queue_.clear();
  steers_.clear();
  cancelled_ = true;
  gate_.Wake();
}

bool SessionState::Close(std::string_view reason) {
  {
    SessionMutexLock l(&mu_);
    if (closed_) return false;  // the manager's Shutdown, then the destructor's
    closed_ = true;
    transcript_.Seal(reason);
    // Whole, sealed or not: what a failed save left unwritten, and the journal folded in.
    SaveLocked(Save::kWhole);
  }
  WriteSaves();
  return true;
}

}  // namespace agent::daemon
