#include "daemon/session.h"

#include <algorithm>
#include <future>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/paths.h"
#include "common/tool_env.h"
#include "daemon/compactor.h"
#include "daemon/llm/request_builder.h"
#include "daemon/policy/rules.h"
#include "daemon/system_prompt.h"
#include "daemon/tools/change_preview.h"
#include "daemon/tools/tool_args.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

std::string NewSessionId() {
  static absl::BitGen gen;
  static agent::Mutex mu;
  agent::MutexLock l(&mu);
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

std::string TitleFrom(std::string_view prompt) {
  std::string t(prompt.substr(0, std::min<size_t>(prompt.size(), 80)));
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t;
}

std::string ProjectSettingsPath(const std::string& workdir) {
  return workdir + "/.agent/settings.json";
}

}  // namespace

// Forwards streaming progress from the model transport into events.
class Session::TurnSink : public llm::StreamSink {
 public:
  explicit TurnSink(Session* s) : s_(s) {}
  void OnText(std::string_view text) override {
    agent::MutexLock l(&s_->mu_);
    s_->partial_text_.append(text);
    v1::Event e;
    e.mutable_text_delta()->set_text(std::string(text));
    s_->Emit(std::move(e));
  }
  void OnReasoning(std::string_view text) override {
    agent::MutexLock l(&s_->mu_);
    s_->partial_reasoning_.append(text);
    v1::Event e;
    e.mutable_reasoning_delta()->set_text(std::string(text));
    s_->Emit(std::move(e));
  }
  void OnToolCallStarted(std::string_view id, std::string_view name) override {
    agent::MutexLock l(&s_->mu_);
    v1::Event e;
    e.mutable_tool_call_started()->set_call_id(std::string(id));
    e.mutable_tool_call_started()->set_name(std::string(name));
    s_->Emit(std::move(e));
  }
  void OnRetry(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason) override {
    agent::MutexLock l(&s_->mu_);
    // What streamed before the failed attempt is discarded with it.
    s_->partial_text_.clear();
    s_->partial_reasoning_.clear();
    v1::Event e;
    auto* r = e.mutable_retrying();
    r->set_attempt(attempt);
    r->set_max_attempts(max_attempts);
    r->set_delay_ms(delay_ms);
    r->set_reason(std::string(reason));
    s_->Emit(std::move(e));
  }

 private:
  Session* s_;
};

Session::Session(std::string workdir, SessionMeta meta, Transcript transcript,
                 SessionSettings settings, SessionDeps deps, SessionLock lock)
    : workdir_(std::move(workdir)),
      meta_id_(meta.id),
      deps_(std::move(deps)),
      lock_(std::move(lock)),
      meta_(std::move(meta)),
      transcript_(std::move(transcript)),
      settings_(std::move(settings)),
      log_(deps_.epoch, kEventRingSize) {
  model_ = deps_.make_model_client();
}

Session::~Session() { Shutdown("the session was closed"); }

absl::StatusOr<std::shared_ptr<Session>> Session::Create(const std::string& workdir,
                                                         SessionSettings settings,
                                                         std::string title, SessionDeps deps) {
  SessionMeta meta;
  meta.id = NewSessionId();
  meta.workdir = workdir;
  meta.title = std::move(title);
  meta.model = settings.model.model;
  meta.created_unix_ms = meta.updated_unix_ms = NowMs();
  auto lock = SessionLock::Acquire(workdir, meta.id);
  if (!lock.ok()) return lock.status();
  Transcript t;
  (void)t.AppendSystem(SystemPrompt(workdir));
  std::shared_ptr<Session> s(new Session(workdir, std::move(meta), std::move(t),
                                         std::move(settings), std::move(deps), *std::move(lock)));
  agent::MutexLock l(&s->mu_);
  s->SaveLocked();
  if (s->save_failed_) {
    return absl::UnavailableError("cannot save the new session in " + SessionsDir(workdir));
  }
  return s;
}

absl::StatusOr<std::shared_ptr<Session>> Session::Load(const std::string& workdir,
                                                       const std::string& id,
                                                       SessionSettings settings, SessionDeps deps) {
  auto lock = SessionLock::Acquire(workdir, id);
  if (!lock.ok()) return lock.status();
  auto transcript = LoadTranscript(workdir, id);
  if (!transcript.ok()) return transcript.status();
  SessionMeta meta;
  if (auto m = LoadMeta(workdir, id); m.ok()) {
    meta = *std::move(m);
  } else {
    meta.id = id;
    meta.workdir = workdir;
    meta.created_unix_ms = meta.updated_unix_ms = NowMs();
  }
  if (settings.model.model.empty()) settings.model.model = meta.model;
  std::shared_ptr<Session> s(new Session(workdir, std::move(meta), *std::move(transcript),
                                         std::move(settings), std::move(deps), *std::move(lock)));
  agent::MutexLock l(&s->mu_);
  if (s->transcript_.Seal("interrupted: the daemon stopped before this call finished") > 0) {
    s->SaveLocked();
  } else if (s->meta_.message_count != static_cast<int64_t>(s->transcript_.size())) {
    s->SaveLocked(Save::kMetaOnly);  // the daemon stopped inside a turn
  }
  return s;
}

absl::StatusOr<std::shared_ptr<Session>> Session::Fork(Session& source, int at_message,
                                                       SessionDeps deps) {
  Transcript copy;
  SessionSettings settings;
  SessionMeta meta;
  {
    agent::MutexLock l(&source.mu_);
    copy = source.transcript_;
    settings = source.settings_;
    meta = source.meta_;
  }
  copy.Seal("the session was forked while this call ran");
  if (at_message > 0) copy.TruncateTo(static_cast<size_t>(at_message));
  meta.parent_id = meta.id;
  meta.id = NewSessionId();
  meta.created_unix_ms = meta.updated_unix_ms = NowMs();
  meta.title = "fork of " + meta.title;
  auto lock = SessionLock::Acquire(source.workdir_, meta.id);
  if (!lock.ok()) return lock.status();
  std::shared_ptr<Session> s(new Session(source.workdir_, std::move(meta), std::move(copy),
                                         std::move(settings), std::move(deps), *std::move(lock)));
  agent::MutexLock l(&s->mu_);
  s->SaveLocked();
  return s;
}

// ---- Queries --------------------------------------------------------------------------------

v1::SessionState Session::StateLocked() const {
  if (approval_.has_value() && !approval_->answered) return v1::SESSION_STATE_WAITING_APPROVAL;
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
  info.set_attached_clients(static_cast<int>(clients_.size()));
  info.set_created_unix_ms(meta_.created_unix_ms);
  info.set_updated_unix_ms(meta_.updated_unix_ms);
  info.set_message_count(static_cast<int>(transcript_.size()));
  info.set_parent_id(meta_.parent_id);
  info.set_policy(settings_.policy);
  return info;
}

v1::Session Session::Info() const {
  agent::MutexLock l(&mu_);
  return InfoLocked();
}

std::string Session::TranscriptJson() const {
  agent::MutexLock l(&mu_);
  return transcript_.FileText();
}

bool Session::Busy() const {
  agent::MutexLock l(&mu_);
  return running_ || compacting_ || !queue_.empty();
}

int Session::attached_clients() const {
  agent::MutexLock l(&mu_);
  return static_cast<int>(clients_.size());
}

v1::Event Session::SnapshotLocked() const {
  v1::Event e;
  e.set_seq(log_.last_seq());
  e.set_epoch(log_.epoch());
  e.set_unix_ms(NowMs());
  auto* snap = e.mutable_snapshot();
  snap->set_transcript_json(transcript_.FileText());  // from the cache: no re-serialising
  snap->set_state(StateLocked());
  if (approval_.has_value() && !approval_->answered) {
    *snap->mutable_pending_approval() = approval_->approval;
  }
  for (const QueuedPrompt& p : queue_) snap->add_queued_prompts(p.text);
  for (const Client& c : clients_) snap->add_clients(c.name);
  *snap->mutable_session() = InfoLocked();
  snap->set_partial_text(partial_text_);
  snap->set_partial_reasoning(partial_reasoning_);
  return e;
}

// ---- Events and saving ------------------------------------------------------------------------

void Session::Emit(v1::Event event) { log_.Append(std::move(event)); }

void Session::EmitClientsChanged() {
  v1::Event e;
  for (const Client& c : clients_) e.mutable_clients_changed()->add_clients(c.name);
  Emit(std::move(e));
}

void Session::SaveLocked(Save what) {
  meta_.updated_unix_ms = NowMs();
  meta_.message_count = static_cast<int64_t>(transcript_.size());
  meta_.model = settings_.model.model;
  absl::Status s;
  if (what != Save::kMetaOnly) s = SaveTranscript(workdir_, meta_.id, transcript_);
  if (s.ok() && what != Save::kTranscriptOnly) s = SaveMeta(meta_);
  if (!s.ok()) {
    // Keep going: the next message saves everything again. Tell the user once per failure run.
    if (!save_failed_) {
      v1::Event e;
      e.mutable_error()->set_message(absl::StrCat("cannot save the session: ", s.message()));
      Emit(std::move(e));
    }
    save_failed_ = true;
    return;
  }
  save_failed_ = false;
}

// ---- Clients ----------------------------------------------------------------------------------

void Session::Attach(Subscriber* sub, const std::string& client_name, bool read_only,
                     const std::string& epoch, uint64_t after_seq) {
  agent::MutexLock l(&mu_);
  if (auto missed = log_.Since(epoch, after_seq); missed.has_value()) {
    for (const EventPtr& e : *missed) sub->Deliver(e);
  } else {
    sub->Deliver(std::make_shared<const v1::Event>(SnapshotLocked()));
  }
  log_.Subscribe(sub);
  clients_.push_back({sub, client_name, read_only});
  if (read_only) read_only_names_.push_back(client_name);
  EmitClientsChanged();
}

void Session::Detach(Subscriber* sub) {
  agent::MutexLock l(&mu_);
  log_.Unsubscribe(sub);
  auto it =
      std::find_if(clients_.begin(), clients_.end(), [&](const Client& c) { return c.sub == sub; });
  if (it == clients_.end()) return;
  if (it->read_only) {
    auto r = std::find(read_only_names_.begin(), read_only_names_.end(), it->name);
    if (r != read_only_names_.end()) read_only_names_.erase(r);
  }
  clients_.erase(it);
  EmitClientsChanged();
}

void Session::Resync(Subscriber* sub) {
  agent::MutexLock l(&mu_);
  sub->Deliver(std::make_shared<const v1::Event>(SnapshotLocked()));
}

bool Session::IsReadOnlyClient(const std::string& client) const {
  return std::find(read_only_names_.begin(), read_only_names_.end(), client) !=
         read_only_names_.end();
}

// ---- Commands ---------------------------------------------------------------------------------

absl::StatusOr<int> Session::SendPrompt(std::string text, const std::string& client) {
  agent::MutexLock l(&mu_);
  if (IsReadOnlyClient(client)) {
    return absl::PermissionDeniedError("a read-only observer cannot send prompts");
  }
  if (shutting_down_) return absl::UnavailableError("the daemon is shutting down");
  if (text.empty()) return absl::InvalidArgumentError("empty prompt");
  queue_.push_back({std::move(text), client});
  int position = static_cast<int>(queue_.size()) - 1 + (in_turn_ ? 1 : 0);
  if (!compacting_) StartTurnThreadLocked();
  return position;
}

absl::Status Session::Approve(const std::string& call_id, v1::Decision decision,
                              std::vector<std::string> rules, std::string reason,
                              const std::string& client) {
  agent::MutexLock l(&mu_);
  if (IsReadOnlyClient(client)) {
    return absl::PermissionDeniedError("a read-only observer cannot answer approvals");
  }
  if (!approval_.has_value() || approval_->answered || approval_->approval.call_id() != call_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("no approval pending for call ", call_id, " (already answered?)"));
  }
  if (decision == v1::DECISION_UNSPECIFIED) {
    return absl::InvalidArgumentError("decision missing");
  }
  approval_->answered = true;
  approval_->decision = decision;
  approval_->rules = std::move(rules);
  approval_->reason = std::move(reason);
  approval_->client = client;
  approval_cv_.SignalAll();
  return absl::OkStatus();
}

absl::StatusOr<bool> Session::Cancel(const std::string& client) {
  agent::MutexLock l(&mu_);
  if (IsReadOnlyClient(client)) {
    return absl::PermissionDeniedError("a read-only observer cannot cancel");
  }
  if (!running_) return false;
  cancelled_ = true;
  approval_cv_.SignalAll();
  return true;
}

absl::Status Session::SetPolicy(v1::PolicyMode mode, const std::vector<std::string>& add_allow,
                                const std::string& model) {
  if (!add_allow.empty()) {
    for (const std::string& r : add_allow) {
      if (auto p = policy::ParseRule(r); !p.ok()) return p.status();
    }
    if (auto s = policy::AppendAllowRules(ProjectSettingsPath(workdir_), add_allow); !s.ok()) {
      return s;
    }
  }
  agent::MutexLock l(&mu_);
  if (mode != v1::POLICY_MODE_UNSPECIFIED) settings_.policy = mode;
  if (!model.empty()) settings_.model.model = model;
  return absl::OkStatus();
}

void Session::OverrideModel(const ModelSettings& m) {
  agent::MutexLock l(&mu_);
  settings_.model = MergeModelSettings(m, settings_.model);
}

void Session::SetToolEnvironment(const v1::ToolEnvironment& env) {
  if (env.variables().empty()) return;  // the latest non-empty one wins
  const ToolEnvPolicy sent{{env.keep().begin(), env.keep().end()},
                           {env.drop().begin(), env.drop().end()}};
  std::vector<std::string> filtered =
      BuildToolEnvironment({env.variables().begin(), env.variables().end()},
                           MergeToolEnvPolicy(sent, deps_.config.tool_env));
  agent::MutexLock l(&mu_);
  settings_.tool_env = std::move(filtered);
}

absl::StatusOr<int> Session::Compact() {
  {
    agent::MutexLock l(&mu_);
    if (running_ || compacting_) {
      return absl::FailedPreconditionError("a turn is running; compact when it is done");
    }
    compacting_ = true;
  }
  auto r = CompactNow(/*automatic=*/false);
  agent::MutexLock l(&mu_);
  compacting_ = false;
  // Prompts sent while compacting waited for it.
  if (!queue_.empty() && !shutting_down_) StartTurnThreadLocked();
  return r;
}

void Session::Shutdown(std::string_view reason) {
  {
    agent::MutexLock l(&mu_);
    shutting_down_ = true;
    queue_.clear();
    cancelled_ = true;
    approval_cv_.SignalAll();
  }
  if (turn_thread_.joinable()) turn_thread_.join();
  agent::MutexLock l(&mu_);
  if (transcript_.Seal(reason) > 0) SaveLocked();
}

// ---- The turn loop ----------------------------------------------------------------------------

void Session::StartTurnThreadLocked() {
  if (running_) return;
  // The previous turn thread has finished: running_ is false only after its last lock.
  if (turn_thread_.joinable()) turn_thread_.join();
  running_ = true;
  turn_thread_ = std::thread([this] { TurnThreadMain(); });
}

void Session::TurnThreadMain() {
  for (;;) {
    QueuedPrompt prompt;
    {
      agent::MutexLock l(&mu_);
      if (queue_.empty() || shutting_down_) {
        running_ = false;
        return;
      }
      prompt = std::move(queue_.front());
      queue_.pop_front();
      in_turn_ = true;
      cancelled_ = false;
      if (meta_.title.empty()) meta_.title = TitleFrom(prompt.text);
      // Cannot fail: turns end with nothing pending.
      (void)transcript_.AppendUser(prompt.text);
      ++meta_.turns;
      SaveLocked();
      v1::Event started;
      started.mutable_turn_started()->set_prompt(prompt.text);
      Emit(std::move(started));
      v1::Event user;
      user.mutable_user_message()->set_text(prompt.text);
      user.mutable_user_message()->set_client_name(prompt.client);
      Emit(std::move(user));
    }
    std::string error;
    v1::TurnOutcome outcome = RunTurn(&error);
    agent::MutexLock l(&mu_);
    const bool sealed = transcript_.Seal(outcome == v1::TURN_OUTCOME_CANCELLED
                                             ? "cancelled by the user"
                                             : "the turn ended before it ran") > 0;
    SaveLocked(sealed ? Save::kAll : Save::kMetaOnly);
    partial_text_.clear();
    partial_reasoning_.clear();
    in_turn_ = false;
    v1::Event ended;
    ended.mutable_turn_ended()->set_outcome(outcome);
    ended.mutable_turn_ended()->set_error(error);
    Emit(std::move(ended));
    // Idle in the same step as the TurnEnded event: a client that answers it with Compact
    // must find the session free, not still winding down.
    if (queue_.empty() || shutting_down_) {
      running_ = false;
      return;
    }
  }
}

llm::ModelRequest Session::BuildRequestLocked() const {
  llm::ModelRequest req;
  req.settings = settings_.model;
  req.messages = transcript_.messages();
  req.tools = deps_.tools->Schemas();
  return req;
}

bool Session::ShouldCompactLocked() const {
  const Config& c = deps_.config;
  if (c.compact_at_chars > 0 &&
      static_cast<int64_t>(transcript_.CharCount()) > c.compact_at_chars) {
    return true;
  }
  return c.context_tokens > 0 && meta_.prompt_tokens > c.context_tokens * 8 / 10;
}

v1::TurnOutcome Session::RunTurn(std::string* error) {
  int max_steps;
  {
    agent::MutexLock l(&mu_);
    max_steps = settings_.max_steps > 0 ? settings_.max_steps : deps_.config.max_steps;
  }
  for (int step = 0; step < max_steps; ++step) {
    if (cancelled_) return v1::TURN_OUTCOME_CANCELLED;
    bool compact;
    {
      agent::MutexLock l(&mu_);
      compact = ShouldCompactLocked();
    }
    if (compact) {
      // A failed summary leaves the transcript as it was; the request below may still fit.
      (void)CompactNow(/*automatic=*/true);
    }
    llm::ModelRequest req;
    {
      agent::MutexLock l(&mu_);
      if (auto s = transcript_.ValidateForRequest(); !s.ok()) {
        *error = absl::StrCat("internal error, transcript invalid: ", s.message());
        return v1::TURN_OUTCOME_ERROR;
      }
      req = BuildRequestLocked();
      partial_text_.clear();
      partial_reasoning_.clear();
    }
    TurnSink sink(this);
    absl::StatusOr<llm::ModelReply> reply = model_->Complete(req, &sink, &cancelled_);
    if (!reply.ok()) {
      agent::MutexLock l(&mu_);
      // Text the user already saw stays in the transcript, so the model knows it said it.
      if (!partial_text_.empty()) {
        (void)transcript_.AppendAssistant({{"content", partial_text_}});
        SaveLocked(Save::kTranscriptOnly);
      }
      if (cancelled_ || absl::IsCancelled(reply.status())) return v1::TURN_OUTCOME_CANCELLED;
      *error = std::string(reply.status().message());
      return v1::TURN_OUTCOME_ERROR;
    }
    std::vector<llm::ToolCall> calls = reply->tool_calls;
    bool truncated = reply->LastCallTruncated();
    {
      agent::MutexLock l(&mu_);
      Json msg = llm::AssistantMessageFromReply(*reply);
      if (auto s = transcript_.AppendAssistant(msg); !s.ok()) {
        *error = absl::StrCat("the model's reply was malformed: ", s.message());
        return v1::TURN_OUTCOME_ERROR;
      }
      partial_text_.clear();
      partial_reasoning_.clear();
      meta_.tool_calls += static_cast<int64_t>(calls.size());
      if (reply->usage.has_value()) {
        meta_.prompt_tokens = reply->usage->prompt_tokens;
        meta_.completion_tokens += reply->usage->completion_tokens;
        v1::Event u;
        u.mutable_usage()->set_prompt_tokens(reply->usage->prompt_tokens);
        u.mutable_usage()->set_completion_tokens(reply->usage->completion_tokens);
        Emit(std::move(u));
      }
      SaveLocked(Save::kTranscriptOnly);
      v1::Event am;
      am.mutable_assistant_message()->set_text(reply->content);
      for (const llm::ToolCall& c : calls) {
        auto* tc = am.mutable_assistant_message()->add_tool_calls();
        tc->set_id(c.id);
        tc->set_name(c.name);
        tc->set_arguments(c.arguments);
      }
      Emit(std::move(am));
    }
    if (calls.empty()) {
      if (reply->finish_reason == "length") {
        *error = "the model stopped at its output limit";
        return v1::TURN_OUTCOME_ERROR;
      }
      return v1::TURN_OUTCOME_DONE;
    }
    RunToolCalls(calls, truncated);
    if (cancelled_) return v1::TURN_OUTCOME_CANCELLED;
  }
  return v1::TURN_OUTCOME_MAX_STEPS;
}

tools::ToolContext Session::MakeToolContext(const std::string& call_id) {
  tools::ToolContext ctx;
  ctx.workdir = workdir_;
  ctx.files = &files_;
  ctx.cancelled = &cancelled_;
  ctx.default_timeout_s = deps_.config.bash_timeout_s;
  {
    agent::MutexLock l(&mu_);
    ctx.env = settings_.tool_env;
  }
  ctx.on_output = [this, call_id](std::string_view chunk, bool is_stderr) {
    agent::MutexLock l(&mu_);
    v1::Event e;
    e.mutable_tool_output()->set_call_id(call_id);
    e.mutable_tool_output()->set_chunk(std::string(chunk));
    e.mutable_tool_output()->set_stderr(is_stderr);
    Emit(std::move(e));
  };
  return ctx;
}

void Session::RunToolCalls(const std::vector<llm::ToolCall>& calls, bool last_truncated) {
  // Consecutive read-only calls run concurrently; results always enter in call order.
  size_t i = 0;
  while (i < calls.size()) {
    size_t j = i;
    while (j < calls.size() && deps_.tools->IsReadOnly(calls[j].name) &&
           !(last_truncated && j + 1 == calls.size())) {
      ++j;
    }
    std::vector<tools::ToolOutcome> outcomes;
    if (j - i > 1) {
      std::vector<std::future<tools::ToolOutcome>> futures;
      for (size_t k = i; k < j; ++k) {
        futures.push_back(std::async(std::launch::async,
                                     [this, &calls, k] { return RunOneCall(calls[k], false); }));
      }
      for (auto& f : futures) outcomes.push_back(f.get());
    } else {
      if (j == i) j = i + 1;  // a gated (or truncated) call runs alone
      outcomes.push_back(RunOneCall(calls[i], last_truncated && i + 1 == calls.size()));
    }
    agent::MutexLock l(&mu_);
    for (size_t k = i; k < j; ++k) {
      const tools::ToolOutcome& o = outcomes[k - i];
      std::string content = o.content;
      // The tool only knows it was cancelled; the model should know why.
      if (shutting_down_ && cancelled_) content += "\n[interrupted: the daemon was stopping]";
      if (auto s = transcript_.AppendToolResult(calls[k].id, content); !s.ok()) continue;
      SaveLocked(Save::kTranscriptOnly);
      v1::Event e;
      auto* r = e.mutable_tool_result();
      r->set_call_id(calls[k].id);
      r->set_name(calls[k].name);
      r->set_content(content);
      r->set_is_error(o.is_error);
      Emit(std::move(e));
    }
    i = j;
    if (cancelled_) return;  // the rest is sealed by the turn loop
  }
}

tools::ToolOutcome Session::RunOneCall(const llm::ToolCall& call, bool truncated) {
  {
    agent::MutexLock l(&mu_);
    v1::Event e;
    auto* c = e.mutable_tool_call_ready()->mutable_call();
    c->set_id(call.id);
    c->set_name(call.name);
    c->set_arguments(call.arguments);
    Emit(std::move(e));
  }
  if (cancelled_) return {"Not run: cancelled by the user.", true};
  if (truncated) {
    return {
        "Not run: your reply was cut at the output limit, so these arguments may be "
        "incomplete. Send the call again, shorter if needed.",
        true};
  }
  const tools::Tool* tool = deps_.tools->Find(call.name);
  if (tool == nullptr) {
    std::string names;
    for (std::string_view n : deps_.tools->Names()) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", std::string(n));
    }
    return {absl::StrCat("Unknown tool \"", call.name, "\". Available: ", names, "."), true};
  }
  absl::StatusOr<Json> args = tools::ParseToolArguments(call.arguments);
  if (!args.ok()) return {std::string(args.status().message()), true};
  if (tool->Gated()) {
    if (auto denied = Authorize(call, *args); denied.has_value()) return *denied;
  }
  tools::ToolContext ctx = MakeToolContext(call.id);
  return tool->Run(*args, ctx);
}

std::optional<tools::ToolOutcome> Session::Authorize(const llm::ToolCall& call, const Json& args) {
  v1::PolicyMode mode;
  {
    agent::MutexLock l(&mu_);
    mode = settings_.policy;
  }
  if (mode == v1::POLICY_MODE_YES) return std::nullopt;
  if (mode == v1::POLICY_MODE_READ_ONLY) {
    return tools::ToolOutcome{"Denied: this session is read-only.", true};
  }
  policy::RuleSet rules;
  for (const std::string& path : {ConfigDir() + "/config.json", ProjectSettingsPath(workdir_)}) {
    auto loaded = policy::LoadRules(path);
    if (loaded.ok()) policy::MergeRules(*loaded, &rules);
  }
  // File rules match workdir-relative paths whatever form the model used.
  Json rule_args = args;
  if (args.contains("path") && args["path"].is_string()) {
    std::string p = args["path"].get<std::string>();
    std::string prefix = workdir_ + "/";
    if (p.rfind(prefix, 0) == 0) rule_args["path"] = p.substr(prefix.size());
  }
  switch (policy::Evaluate(rules, call.name, rule_args)) {
    case policy::Verdict::kAllow:
      return std::nullopt;
    case policy::Verdict::kDeny:
      return tools::ToolOutcome{"Denied by a permission rule of this project.", true};
    case policy::Verdict::kAsk:
      break;
  }
  if (mode == v1::POLICY_MODE_DENY_UNRULED) {
    return tools::ToolOutcome{
        "Denied: this run does not allow " + call.name + " (the user did not pass --yes).", true};
  }
  tools::ToolContext ctx = MakeToolContext(call.id);
  auto preview = tools::PreviewGatedCall(call.name, args, ctx);
  if (!preview.ok()) return tools::ToolOutcome{std::string(preview.status().message()), true};

  agent::MutexLock l(&mu_);
  PendingApprovalState st;
  st.approval.set_call_id(call.id);
  st.approval.set_tool(call.name);
  st.approval.set_summary(preview->summary);
  st.approval.set_diff(preview->diff);
  for (std::string& r : policy::ProposeRules(call.name, rule_args)) {
    st.approval.add_proposed_rules(std::move(r));
  }
  approval_ = std::move(st);
  {
    v1::Event e;
    *e.mutable_approval_requested()->mutable_approval() = approval_->approval;
    Emit(std::move(e));
  }
  while (!approval_->answered && !cancelled_) approval_cv_.Wait(&mu_);
  PendingApprovalState done = std::move(*approval_);
  approval_.reset();
  if (!done.answered) {
    v1::Event e;
    e.mutable_approval_resolved()->set_call_id(call.id);
    e.mutable_approval_resolved()->set_decision(v1::DECISION_DENY);
    e.mutable_approval_resolved()->set_reason("cancelled");
    Emit(std::move(e));
    return tools::ToolOutcome{"Not run: cancelled by the user.", true};
  }
  if (done.decision == v1::DECISION_ALLOW_ALWAYS && done.rules.empty()) {
    done.rules.assign(done.approval.proposed_rules().begin(), done.approval.proposed_rules().end());
  }
  v1::Event e;
  auto* r = e.mutable_approval_resolved();
  r->set_call_id(call.id);
  r->set_decision(done.decision);
  r->set_client_name(done.client);
  r->set_reason(done.reason);
  for (const std::string& rule : done.rules) r->add_rules(rule);
  Emit(std::move(e));
  switch (done.decision) {
    case v1::DECISION_ALLOW_ONCE:
      return std::nullopt;
    case v1::DECISION_ALLOW_ALWAYS:
      if (auto s = policy::AppendAllowRules(ProjectSettingsPath(workdir_), done.rules); !s.ok()) {
        v1::Event err;
        err.mutable_error()->set_message(absl::StrCat("cannot record the rule: ", s.message()));
        Emit(std::move(err));
      }
      return std::nullopt;
    default:
      return tools::ToolOutcome{done.reason.empty()
                                    ? "The user denied this call."
                                    : absl::StrCat("The user denied this call: ", done.reason),
                                true};
  }
}

absl::StatusOr<int> Session::CompactNow(bool automatic) {
  Json messages;
  size_t cut;
  ModelSettings model;
  {
    agent::MutexLock l(&mu_);
    cut = transcript_.CutPoint();
    if (cut <= transcript_.FirstCompactable()) {
      return absl::FailedPreconditionError("the transcript is too short to compact");
    }
    messages = Json::array();
    for (size_t i = transcript_.FirstCompactable(); i < cut; ++i) {
      messages.push_back(transcript_.messages()[i]);
    }
    model = settings_.model;
  }
  absl::StatusOr<std::string> summary = Summarize(*model_, model, messages, &cancelled_);
  agent::MutexLock l(&mu_);
  if (!summary.ok()) {
    v1::Event e;
    e.mutable_error()->set_message(absl::StrCat("compaction failed, the transcript is unchanged: ",
                                                summary.status().message()));
    Emit(std::move(e));
    return summary.status();
  }
  // The turn loop is the only writer while a turn runs, and it is here: the prefix is intact.
  auto removed = transcript_.ReplacePrefix(cut, SummaryMessage(*summary));
  if (!removed.ok()) return removed.status();
  if (auto s = AppendCompacted(workdir_, meta_.id, *removed, *summary); !s.ok()) {
    v1::Event e;
    e.mutable_error()->set_message(
        absl::StrCat("cannot keep the compacted messages: ", s.message()));
    Emit(std::move(e));
  }
  ++meta_.compactions;
  meta_.prompt_tokens = 0;  // the next request reports the new size
  SaveLocked();
  v1::Event e;
  e.mutable_compacted()->set_removed_messages(static_cast<int>(removed->size()));
  e.mutable_compacted()->set_kept_messages(static_cast<int>(transcript_.size()));
  Emit(std::move(e));
  (void)automatic;
  return static_cast<int>(removed->size());
}

}  // namespace agent::daemon
