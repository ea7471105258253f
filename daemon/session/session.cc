#include "daemon/session/session.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "common/status_macros.h"
#include "common/tool_env.h"
#include "daemon/policy/rules.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/turn_runner.h"

namespace agent::daemon {
namespace v1 = agent::v1;

absl::Status RemovedError(const std::string& id) {
  return absl::NotFoundError(
      absl::StrCat("session ", id, " was removed (agent rm); start a new one with agent"));
}

Session::Session(Opening o, SessionDeps deps)
    : workdir_(std::move(o.workdir)),
      id_(o.meta.id),
      deps_(std::move(deps)),
      lock_(std::move(o.lock)),
      meta_(std::move(o.meta)),
      answered_(o.answered),
      transcript_(std::move(o.transcript)),
      settings_(std::move(o.settings)),
      audience_(deps_.epoch, deps_.clock),
      saver_(deps_.files_for ? deps_.files_for(workdir_, id_) : DiskSessionFiles(workdir_, id_),
             [this](const SessionSaver::Outcome& outcome) { OnSaveResult(outcome); }) {
  rules_ = deps_.rules_for ? deps_.rules_for(workdir_) : nullptr;
  if (!rules_) rules_ = std::make_shared<policy::FixedRuleSource>(policy::RuleSet{});
  turns_ = std::make_unique<TurnRunner>(*this);
  hooks_ = MakeHooks();
  guard_ = std::make_unique<CallGuard>(turns_.get(), workdir_, rules_.get(), hooks_.get(),
                                       deps_.sandbox != nullptr && deps_.sandbox->Confines());
  SessionMutexLock l(&mu_);
  OpenContextLocked(o);
  if (o.write == Opening::Write::kAll) SaveLocked();
  if (o.write == Opening::Write::kMetaOnly) SaveLocked(Save::kMetaOnly);
}  // the first save is written here

Session::~Session() { Shutdown("the session was closed"); }

Session::Opening Session::ForkPoint(int at_message) const {
  Opening o;
  o.workdir = workdir_;
  o.kind = Opening::Kind::kForked;
  {
    SessionMutexLock l(&mu_);
    o.transcript = transcript_;
    o.settings = settings_;
    o.meta = meta_;
  }
  o.transcript.Seal("the session was forked while this call ran");
  if (at_message > 0) o.transcript.TruncateTo(static_cast<size_t>(at_message));
  return o;
}

// ---- Queries --------------------------------------------------------------------------------

v1::SessionState Session::StateLocked() const {
  if (gate_.pending() != nullptr || !child_approvals_.empty()) {
    return v1::SESSION_STATE_WAITING_APPROVAL;
  }
  if (running_ || compacting_) return v1::SESSION_STATE_RUNNING;
  return v1::SESSION_STATE_IDLE;
}

v1::Session Session::InfoLocked() const {
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
  if (deps_.sandbox != nullptr) info.set_sandbox(deps_.sandbox->Describe());
  return info;
}

v1::Session Session::Info() const {
  SessionMutexLock l(&mu_);
  return InfoLocked();
}

std::string Session::TranscriptJson() const {
  SessionMutexLock l(&mu_);
  return transcript_.FileText();
}

ModelSettings Session::model_settings() const {
  SessionMutexLock l(&mu_);
  return settings_.model;
}

bool Session::discarded() const {
  SessionMutexLock l(&mu_);
  return discarded_;
}

bool Session::Busy() const {
  if (saver_.unsaved()) return true;
  SessionMutexLock l(&mu_);
  return running_ || compacting_ || !queue_.empty();
}

bool Session::RetrySave() {
  if (!saver_.unsaved()) return true;
  {
    SessionMutexLock l(&mu_);
    SaveLocked(Save::kWhole);
  }  // written here
  return !saver_.unsaved();
}

absl::Status Session::RulesProblem() const { return rules_->Rules().status(); }

int Session::attached_clients() const {
  SessionMutexLock l(&mu_);
  return audience_.size();
}

v1::Event Session::SnapshotLocked() const {
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

// ---- Events and saving ------------------------------------------------------------------------

// The analysis cannot follow a lock released and taken again inside one function.
void Session::StartDeferredWritesLocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  mu_.Unlock();
  RunDeferredWrites();
  mu_.Lock();
}

void Session::DiscardIfUnansweredLocked() {
  if (answered_ || discarded_ || !audience_.empty() || running_ || compacting_ || !queue_.empty()) {
    return;
  }
  discarded_ = true;
  shutting_down_ = true;               // no prompt starts a turn again
  saver_.Drop(/*delete_files=*/true);  // once the lock is released
}

void Session::SaveLocked(Save what) {
  if (discarded_ || removed_) return;  // its files are gone on purpose
  meta_.updated_unix_ms = NowMs();
  meta_.message_count = static_cast<int64_t>(transcript_.size());
  meta_.model = settings_.model.model;
  // Outside a turn the session is idle: the file is written whole, its journal folded in.
  if (what != Save::kMetaOnly) saver_.Queue(transcript_, what == Save::kWhole || !in_turn_);
  if (what != Save::kTranscriptOnly) {
    meta_.context = ctx_.ToJson();
    saver_.QueueMeta(meta_);
  }
}

void Session::OnSaveResult(const SessionSaver::Outcome& outcome) {
  const absl::Status& status = outcome.status;
  // Every failure is in the daemon's log (its stderr), whoever is attached.
  if (!status.ok()) {
    std::fprintf(stderr, "agentd: session %s: cannot save: %s%s\n", id_.c_str(),
                 std::string(status.message()).c_str(),
                 outcome.messages_on_disk ? " (every message is in its journal)" : "");
  }
  SessionMutexLock l(&mu_);
  if (!status.ok() && !save_failed_) {
    if (outcome.messages_on_disk) {
      NoticeLocked(
          absl::StrCat("every message is saved in the session's journal, but writing "
                       "its file whole failed: ",
                       status.message(), "; it is tried again at the next save"));
    } else {
      Emit(events::Error(absl::StrCat("cannot save the session: ", status.message(),
                                      "; it is kept in memory and saved again when it can be")));
    }
  } else if (status.ok() && save_failed_) {
    NoticeLocked("the session is saved again");
  }
  save_failed_ = !status.ok();
}

// ---- Clients ----------------------------------------------------------------------------------

void Session::Attach(Subscriber* sub, const std::string& client_name, bool read_only,
                     const std::string& epoch, uint64_t after_seq, bool serves_file_text) {
  SessionMutexLock l(&mu_);
  audience_.Attach(sub, client_name, read_only, serves_file_text, epoch, after_seq,
                   [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return SnapshotLocked(); });
}

void Session::Detach(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  if (audience_.Detach(sub)) DiscardIfUnansweredLocked();
}

void Session::Resync(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  sub->Deliver(std::make_shared<const v1::Event>(SnapshotLocked()));
}

void Session::StartTurnThreadLocked() {
  if (running_) return;
  // The previous turn thread has finished: running_ is false only after its last lock.
  if (turn_thread_.joinable()) turn_thread_.join();
  running_ = true;
  turn_thread_ = std::thread([this] { turns_->Main(); });
}

// ---- Commands ---------------------------------------------------------------------------------

std::optional<std::vector<std::string>> Session::FilterToolEnvironment(
    const v1::ToolEnvironment& env) const {
  if (env.variables().empty()) return std::nullopt;  // the latest non-empty one wins
  const ToolEnvPolicy sent{{env.keep().begin(), env.keep().end()},
                           {env.drop().begin(), env.drop().end()}};
  return BuildToolEnvironment({env.variables().begin(), env.variables().end()},
                              MergeToolEnvPolicy(sent, deps_.config.tool_env));
}

void Session::SetToolEnvironment(const v1::ToolEnvironment& env) {
  std::optional<std::vector<std::string>> filtered = FilterToolEnvironment(env);
  if (!filtered.has_value()) return;
  SessionMutexLock l(&mu_);
  settings_.tool_env = *std::move(filtered);
}

absl::StatusOr<int> Session::SendPrompt(std::string text, const std::string& client,
                                        const ModelSettings& model,
                                        const v1::ToolEnvironment& tool_env,
                                        PromptExpansion expansion,
                                        const v1::ClientSettings& settings) {
  std::optional<std::vector<std::string>> env = FilterToolEnvironment(tool_env);
  SessionMutexLock l(&mu_);
  RETURN_IF_ERROR(CheckPromptLocked(client, text, expansion));
  settings_.model = MergeModelSettings(model, settings_.model);
  if (env.has_value()) settings_.tool_env = *std::move(env);
  queue_.push_back({std::move(text), client, std::move(expansion), settings});
  int position = static_cast<int>(queue_.size()) - 1 + (in_turn_ ? 1 : 0);
  if (!compacting_) StartTurnThreadLocked();
  return position;
}

absl::StatusOr<bool> Session::Steer(std::string text, const std::string& client,
                                    PromptExpansion expansion) {
  SessionMutexLock l(&mu_);
  RETURN_IF_ERROR(CheckPromptLocked(client, text, expansion));
  if (!in_turn_ || cancelled_) return false;
  Emit(events::Steered(text, client, v1::Steered::PENDING));
  steers_.push_back({std::move(text), client, std::move(expansion), {}});
  return true;
}

absl::Status Session::CheckPromptLocked(const std::string& client, const std::string& text,
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

absl::Status Session::Approve(const std::string& call_id, v1::Decision decision,
                              std::vector<std::string> rules, std::string reason,
                              const std::string& client) {
  SessionMutexLock l(&mu_);
  if (audience_.IsReadOnly(client)) {
    return absl::PermissionDeniedError("a read-only observer cannot answer approvals");
  }
  return gate_.Resolve(call_id, {decision, std::move(rules), std::move(reason), client});
}

absl::StatusOr<bool> Session::Cancel(const std::string& client) {
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

absl::Status Session::SetPolicy(v1::PolicyMode mode, const std::vector<std::string>& add_allow,
                                const std::string& client) {
  if (!add_allow.empty()) {
    for (const std::string& r : add_allow) {
      if (auto p = policy::ParseRule(r); !p.ok()) return p.status();
    }
    if (auto s = guard_->RecordPersonsRules(add_allow); !s.ok()) return s;
  }
  if (mode == v1::POLICY_MODE_UNSPECIFIED) return absl::OkStatus();
  agent::MutexLock policy(&policy_mu_);
  std::vector<std::shared_ptr<Session>> children;
  {
    SessionMutexLock l(&mu_);
    if (settings_.policy != mode) {  // every client shows the change and who made it
      v1::Event changed;
      changed.mutable_policy_changed()->set_mode(mode);
      changed.mutable_policy_changed()->set_client_name(client);
      Emit(std::move(changed));
    }
    settings_.policy = mode;
    for (const std::weak_ptr<Session>& w : running_children_) {
      if (std::shared_ptr<Session> c = w.lock()) children.push_back(std::move(c));
    }
  }
  // Outside this session's mu_: a child takes its own (and passes the mode to its children).
  for (const std::shared_ptr<Session>& c : children) (void)c->SetPolicy(mode, {});
  return absl::OkStatus();
}

void Session::SetModel(const std::string& model) {
  if (model.empty()) return;
  SessionMutexLock l(&mu_);
  settings_.model.model = model;
}

absl::StatusOr<int> Session::Compact() {
  {
    SessionMutexLock l(&mu_);
    if (running_ || compacting_) {
      return absl::FailedPreconditionError("a turn is running; compact when it is done");
    }
    compacting_ = true;
  }
  auto r = turns_->Compact();
  SessionMutexLock l(&mu_);
  compacting_ = false;
  // Prompts sent while compacting waited for it.
  if (!queue_.empty() && !shutting_down_) StartTurnThreadLocked();
  return r;
}

void Session::Remove(const std::string& by_client) {
  {
    SessionMutexLock l(&mu_);
    removed_ = true;
    v1::Event e;
    e.mutable_session_removed()->set_client_name(by_client);
    Emit(std::move(e));
    audience_.EndAll(absl::OkStatus());
  }
  Shutdown("the session was deleted");
}

void Session::EndStreams(const absl::Status& status) {
  SessionMutexLock l(&mu_);
  audience_.EndAll(status);
}

void Session::Shutdown(std::string_view reason) {
  {
    SessionMutexLock l(&mu_);
    shutting_down_ = true;
    queue_.clear();
    steers_.clear();
    cancelled_ = true;
    gate_.Wake();
  }
  if (turn_thread_.joinable()) turn_thread_.join();
  jobs_.KillAll();                   // background jobs end with the session, and none starts after
  hooks_->End(std::string(reason));  // SessionEnd, once
  {
    SessionMutexLock l(&mu_);
    if (closed_) return;  // the manager's Shutdown, then the destructor's
    closed_ = true;
    transcript_.Seal(reason);
    // Whole, sealed or not: what a failed save left unwritten, and the journal folded in.
    SaveLocked(Save::kWhole);
  }  // written here
  if (saver_.unsaved()) {
    std::fprintf(stderr, "agentd: session %s could not be saved at shutdown: %s\n", id_.c_str(),
                 std::string(saver_.last_error().message()).c_str());
  }
}

}  // namespace agent::daemon
