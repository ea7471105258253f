#include "daemon/service/session_manager.h"

#include <algorithm>
#include <filesystem>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// Under a sanitizer its own allocator owns the heap; glibc's malloc_trim would not touch it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AGENT_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AGENT_SANITIZED_BUILD 1
#endif
#endif

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "common/paths.h"
#include "common/protocol.h"
#include "daemon/context/session_context.h"
#include "daemon/session/opening.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

ModelSettings FromProto(const v1::ModelConfig& m) {
  ModelSettings s;
  s.base_url = m.base_url();
  s.api_key = m.api_key();
  s.model = m.model();
  s.provider = m.provider();
  s.cache_ttl = m.cache_ttl();
  return s;
}

// How many deleted ids Find still names as removed.
constexpr size_t kRememberRemoved = 256;
// A session's time may be this far ahead of the wall clock (another host's clock, a rounding)
// before List believes the clock was wrong when it was written.
constexpr int64_t kClockSlackMs = 60'000;

absl::Status StoppingError() {
  return absl::UnavailableError("agentd is shutting down; run agent again to start it anew");
}

bool UnloadsIdle(const SessionManagerOptions& o) {
  return o.idle_unload > absl::ZeroDuration() && o.idle_unload != absl::InfiniteDuration();
}

// Gives the heap that unloaded sessions freed back to the OS: glibc keeps freed memory in its
// arenas, so without this a spike of tool output would stay in the daemon's RSS. That is all
// the tuning needed: with it, the bench's 4 × 1 GB spike ends at 21 MB once the sessions idle
// out; MALLOC_ARENA_MAX=2 (mallopt M_ARENA_MAX) was measured too and gained nothing, so glibc's
// defaults stay.
void ReleaseFreeHeap() {
#if defined(__GLIBC__) && !defined(AGENT_SANITIZED_BUILD)
  malloc_trim(0);
#endif
}

}  // namespace

SessionManager::SessionManager(SessionDeps deps)
    : SessionManager(deps, [&deps] {
        SessionManagerOptions o;
        if (deps.config.session_idle_unload_s > 0) {
          o.idle_unload = absl::Seconds(deps.config.session_idle_unload_s);
        }
        return o;
      }()) {}

SessionManager::SessionManager(SessionDeps deps, SessionManagerOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      registry_path_(StateDir() + "/projects.json") {
  if (auto text = ReadFileToString(registry_path_); text.ok()) {
    if (auto j = ParseJson(*text);
        j.ok() && j->contains("projects") && (*j)["projects"].is_array()) {
      agent::MutexLock l(&mu_);
      for (const Json& p : (*j)["projects"]) {
        if (p.is_string()) projects_.push_back(p.get<std::string>());
      }
    }
  }
  if (options_.sweep_thread && UnloadsIdle(options_)) {
    sweeper_ = std::thread([this] { SweepThreadMain(); });
  }
}

SessionManager::~SessionManager() {
  {
    agent::MutexLock l(&mu_);
    stopping_ = true;
  }
  stop_cv_.SignalAll();
  if (sweeper_.joinable()) sweeper_.join();
  ShutdownAll();
}

SessionSettings SessionManager::DefaultSettings() const {
  SessionSettings s;
  s.model = deps_.config.model;
  return s;
}

void SessionManager::RegisterProject(const std::string& workdir) {
  agent::MutexLock l(&mu_);
  if (std::find(projects_.begin(), projects_.end(), workdir) != projects_.end()) return;
  projects_.push_back(workdir);
  Json j{{"projects", projects_}};
  // The registry only speeds up `ls --all`; a failed write loses nothing of a session.
  (void)WriteFileAtomically(registry_path_, DumpJson(j, 2) + "\n");
}

std::vector<std::string> SessionManager::Projects() const {
  agent::MutexLock l(&mu_);
  return projects_;
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Create(
    const v1::CreateSessionRequest& req) {
  {
    agent::MutexLock l(&mu_);
    if (shut_down_) return StoppingError();
  }
  absl::StatusOr<std::string> project = ProjectDirectory(req.workdir());
  if (!project.ok()) return project.status();
  const std::string& workdir = *project;
  SessionSettings settings;
  settings.model = MergeModelSettings(FromProto(req.model()), deps_.config.model);
  settings.policy =
      req.policy() == v1::POLICY_MODE_UNSPECIFIED ? v1::POLICY_MODE_ASK : req.policy();
  settings.max_steps = req.max_steps();
  settings.client = req.settings();
  settings.cwd = req.cwd();
  auto s = CreateSession(workdir, std::move(settings), req.title(), deps_);
  if (!s.ok()) return s.status();
  (*s)->SetToolEnvironment(req.tool_env());  // before any client can find it
  RegisterProject(workdir);
  Insert(*s);
  return *s;
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::CreateChild(const std::string& workdir,
                                                                     SessionSettings settings,
                                                                     std::string title) {
  {
    agent::MutexLock l(&mu_);
    if (shut_down_) return StoppingError();
  }
  auto s = CreateSession(workdir, std::move(settings), std::move(title), deps_);
  if (!s.ok()) return s.status();
  Insert(*s);
  return *s;
}

void SessionManager::Insert(const std::shared_ptr<Session>& s) {
  agent::MutexLock l(&mu_);
  Slot& slot = sessions_[s->id()];  // a new id: no other slot state to keep
  slot.session = s;
  slot.last_used = Now();
}

absl::StatusOr<std::pair<std::string, std::string>> SessionManager::Resolve(
    const std::string& prefix) {
  if (prefix.empty()) return absl::InvalidArgumentError("no session id given");
  std::vector<std::pair<std::string, std::string>> matches;
  for (const std::string& project : Projects()) {
    for (const std::string& id : ListSessionIds(project)) {
      if (absl::StartsWith(id, prefix)) matches.emplace_back(id, project);
    }
  }
  if (matches.empty()) return absl::NotFoundError(absl::StrCat("no session ", prefix));
  if (matches.size() > 1) {
    std::vector<std::string> ids;
    for (auto& m : matches) ids.push_back(m.first);
    if (std::find(ids.begin(), ids.end(), prefix) == ids.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("session id prefix ", prefix, " is ambiguous: ", absl::StrJoin(ids, ", ")));
    }
    for (auto& m : matches) {
      if (m.first == prefix) return m;
    }
  }
  return matches.front();
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Find(const std::string& id_or_prefix) {
  std::string discarded;
  {
    agent::MutexLock l(&mu_);
    if (shut_down_) return StoppingError();
    if (auto it = sessions_.find(id_or_prefix); it != sessions_.end() && it->second.session) {
      if (!it->second.session->discarded()) {
        it->second.last_used = Now();
        return it->second.session;
      }
      sessions_.erase(it);  // its files are gone: Resolve below says it is not there
      discarded = id_or_prefix;
    }
  }
  if (!discarded.empty() && deps_.session_ended) deps_.session_ended(discarded);
  auto where = Resolve(id_or_prefix);
  if (absl::IsNotFound(where.status())) {
    agent::MutexLock l(&mu_);
    for (const std::string& gone : removed_) {
      if (absl::StartsWith(gone, id_or_prefix)) return RemovedError(gone);
    }
  }
  if (!where.ok()) return where.status();
  return LoadOrJoin(where->first, where->second);
}

std::shared_ptr<Session> SessionManager::FindLoaded(const std::string& id) {
  agent::MutexLock l(&mu_);
  if (shut_down_) return nullptr;
  auto it = sessions_.find(id);
  if (it == sessions_.end() || !it->second.session || it->second.session->discarded()) {
    return nullptr;
  }
  it->second.last_used = Now();
  return it->second.session;
}

SessionManager::LoadResult SessionManager::LoadOrJoin(const std::string& id,
                                                      const std::string& workdir) {
  // Each round waits for one unload; a session unloaded twice while we wait would need two
  // idle periods to pass, so three rounds end it in practice.
  for (int round = 0; round < 3; ++round) {
    std::promise<LoadResult> promise;
    std::shared_future<LoadResult> loading;
    std::shared_future<void> unloading;
    {
      agent::MutexLock l(&mu_);
      auto it = sessions_.find(id);
      if (it == sessions_.end()) {
        Slot& slot = sessions_[id];
        slot.loading = promise.get_future().share();
        slot.last_used = Now();
      } else if (it->second.session) {
        it->second.last_used = Now();
        return it->second.session;
      } else {
        loading = it->second.loading;
        unloading = it->second.unloading;
      }
    }
    if (unloading.valid()) {
      unloading.wait();  // until its lock file is released: loading before would fail
      continue;
    }
    if (loading.valid()) {
      if (options_.joined_load) options_.joined_load(id);
      return loading.get();
    }
    return LoadAsOwner(id, workdir, promise);
  }
  return absl::UnavailableError(absl::StrCat("session ", id, " is being unloaded; try again"));
}

SessionManager::LoadResult SessionManager::LoadAsOwner(const std::string& id,
                                                       const std::string& workdir,
                                                       std::promise<LoadResult>& promise) {
  if (options_.before_load) options_.before_load(id);
  LoadResult r = LoadSession(workdir, id, DefaultSettings(), deps_);
  {
    agent::MutexLock l(&mu_);
    if (r.ok()) {
      Slot& slot = sessions_[id];
      slot.loading = {};
      slot.session = *r;
      slot.last_used = Now();
    } else {
      sessions_.erase(id);  // the next Find tries again
    }
  }
  promise.set_value(r);
  return r;
}

std::vector<v1::Session> SessionManager::List(const std::string& workdir, bool all) {
  std::vector<std::string> projects;
  if (all) {
    projects = Projects();
  } else {
    std::error_code ec;
    std::string w = std::filesystem::canonical(AbsolutePath(workdir), ec).string();
    projects.push_back(ec ? AbsolutePath(workdir) : w);
  }
  std::vector<v1::Session> out;
  for (const std::string& project : projects) {
    for (const std::string& id : ListSessionIds(project)) {
      std::shared_ptr<Session> loaded;
      {
        agent::MutexLock l(&mu_);
        if (auto it = sessions_.find(id); it != sessions_.end()) loaded = it->second.session;
      }
      if (loaded) {
        out.push_back(loaded->Info());
        continue;
      }
      v1::Session info;
      info.set_id(id);
      info.set_workdir(project);
      info.set_state(v1::SESSION_STATE_IDLE);
      auto meta = LoadMeta(project, id);
      if (meta.ok()) {
        info.set_title(meta->title);
        info.set_model(meta->model);
        info.set_created_unix_ms(meta->created_unix_ms);
        info.set_updated_unix_ms(meta->updated_unix_ms);
        info.set_message_count(static_cast<int>(SavedMessageCount(project, *meta)));
        info.set_parent_id(meta->parent_id);
        info.set_agent(meta->agent);
        info.set_depth(meta->depth);
        *info.mutable_usage() = context::UsageFromContextJson(meta->context);
      } else {
        info.set_load_error(std::string(meta.status().message()));
      }
      out.push_back(std::move(info));
    }
  }
  // Newest first, by the wall clock the times were written with. A time ahead of now was
  // written while the clock was wrong (set back since): believed, it would make that session
  // `-c`'s "newest" until the clock caught up, so it ranks as the oldest instead.
  const int64_t now_ms = absl::ToUnixMillis(deps_.clock->Now());
  auto rank = [now_ms](const v1::Session& s) {
    return s.updated_unix_ms() > now_ms + kClockSlackMs ? 0 : s.updated_unix_ms();
  };
  std::stable_sort(out.begin(), out.end(), [&rank](const v1::Session& a, const v1::Session& b) {
    return rank(a) > rank(b);
  });
  return out;
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Fork(const std::string& id,
                                                              int at_message) {
  auto source = Find(id);
  if (!source.ok()) return source.status();
  auto s = ForkSession(**source, at_message, deps_);
  if (!s.ok()) return s.status();
  Insert(*s);
  return *s;
}

absl::Status SessionManager::Delete(const std::string& id, const std::string& by_client) {
  auto s = Find(id);
  if (!s.ok()) return s.status();
  std::string full = (*s)->id();
  std::string workdir = (*s)->workdir();
  if ((*s)->Busy()) return absl::FailedPreconditionError("the session is running; cancel it first");
  {
    agent::MutexLock l(&mu_);
    if (auto it = sessions_.find(full); it != sessions_.end() && it->second.session == *s) {
      sessions_.erase(it);
    }
    removed_.push_back(full);
    if (removed_.size() > kRememberRemoved) removed_.pop_front();
  }
  (*s)->Remove(by_client);
  if (deps_.session_ended) deps_.session_ended(full);
  return DeleteSessionFiles(workdir, full);
}

void SessionManager::ShutdownAll(bool stopped) {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    agent::MutexLock l(&mu_);
    shut_down_ = true;
    for (auto& [id, slot] : sessions_) {
      if (slot.session) sessions.push_back(slot.session);
    }
  }
  for (auto& s : sessions) s->Shutdown("interrupted: the daemon stopped");
  const absl::Status end =
      stopped ? absl::Status(kDaemonStoppedCode, "agentd was stopped (agent daemon stop)")
              : StoppingError();
  for (auto& s : sessions) s->EndStreams(end);
}

int SessionManager::loaded_count() const {
  agent::MutexLock l(&mu_);
  int n = 0;
  for (const auto& [id, slot] : sessions_) n += slot.session != nullptr;
  return n;
}

std::vector<std::string> SessionManager::RuleProblems() const {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    agent::MutexLock l(&mu_);
    for (const auto& [id, slot] : sessions_) {
      if (slot.session) sessions.push_back(slot.session);
    }
  }
  std::vector<std::string> problems;
  for (const std::shared_ptr<Session>& s : sessions) {
    absl::Status st = s->RulesProblem();
    std::string p = st.ok() ? s->UntrustedRulesNotice() : std::string(st.message());
    if (p.empty()) continue;
    if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(p);
  }
  return problems;
}

int SessionManager::attached_count() const {
  agent::MutexLock l(&mu_);
  int n = 0;
  for (const auto& [id, slot] : sessions_) {
    if (slot.session) n += slot.session->attached_clients();
  }
  return n;
}

bool SessionManager::IsLoaded(const std::string& id) const {
  agent::MutexLock l(&mu_);
  auto it = sessions_.find(id);
  return it != sessions_.end() && it->second.session != nullptr;
}

// ---- Unloading idle sessions ------------------------------------------------------------------

int SessionManager::SweepIdle() {
  RetryUnsavedSaves();
  if (!UnloadsIdle(options_)) return 0;
  const absl::Time now = Now();
  // 1. Under the lock, without touching a session's: the ones nobody holds and nobody has
  // looked up for the idle time.
  std::vector<std::pair<std::string, std::shared_ptr<Session>>> candidates;
  {
    agent::MutexLock l(&mu_);
    for (auto& [id, slot] : sessions_) {
      if (slot.session && slot.session.use_count() == 1 &&
          now - slot.last_used >= options_.idle_unload) {
        candidates.emplace_back(id, slot.session);
      }
    }
  }
  // 2. Outside it (a session holds its lock while it saves): which of them are at rest.
  std::vector<bool> at_rest;
  for (auto& [id, s] : candidates) {
    at_rest.push_back(!s->Busy() && !s->RunsBackgroundJobs() && s->attached_clients() == 0);
  }
  // 3. Under the lock again: still unused since `now` (a Find in between moved last_used past
  // it, and only a Find or an RPC holding the session could have given it work), so take it.
  struct Victim {
    std::string id;
    std::shared_ptr<Session> session;
    std::promise<void> done;
  };
  std::vector<Victim> victims;
  {
    agent::MutexLock l(&mu_);
    for (size_t i = 0; i < candidates.size(); ++i) {
      auto& [id, s] = candidates[i];
      auto it = sessions_.find(id);
      if (it == sessions_.end() || it->second.session != s) continue;
      Slot& slot = it->second;
      if (!at_rest[i]) {
        // The idle time counts from when it was last seen in use.
        slot.last_used = std::max(slot.last_used, now);
        continue;
      }
      if (s.use_count() != 2 || now - slot.last_used < options_.idle_unload) continue;
      Victim v{id, std::move(s), {}};
      slot.session.reset();
      slot.unloading = v.done.get_future().share();
      victims.push_back(std::move(v));
    }
  }
  candidates.clear();
  for (Victim& v : victims) {
    v.session.reset();  // the last reference: ~Session seals, saves and releases its lock
    {
      agent::MutexLock l(&mu_);
      sessions_.erase(v.id);
    }
    v.done.set_value();
    if (deps_.session_ended) deps_.session_ended(v.id);
    if (options_.after_unload) options_.after_unload(v.id);
  }
  if (!victims.empty()) ReleaseFreeHeap();
  return static_cast<int>(victims.size());
}

void SessionManager::RetryUnsavedSaves() { (void)SaveUnsavedNow(); }

std::vector<std::string> SessionManager::SaveUnsavedNow() {
  std::vector<std::shared_ptr<Session>> unsaved;
  {
    agent::MutexLock l(&mu_);
    for (auto& [id, slot] : sessions_) {
      if (slot.session && slot.session->HasUnsaved()) unsaved.push_back(slot.session);
    }
  }
  // Outside the manager's lock: a retry writes the transcript whole.
  std::vector<std::string> still;
  for (const std::shared_ptr<Session>& s : unsaved) {
    if (!s->RetrySave()) {
      still.push_back(absl::StrCat(s->id(), ": ", s->UnsavedError().message()));
    }
  }
  return still;
}

void SessionManager::SweepThreadMain() {
  const absl::Duration every =
      std::clamp(options_.idle_unload / 4, absl::Milliseconds(10), absl::Seconds(30));
  for (;;) {
    {
      agent::MutexLock l(&mu_);
      if (!stopping_) stop_cv_.WaitWithTimeout(&mu_, every);
      if (stopping_) return;
    }
    SweepIdle();
  }
}

}  // namespace agent::daemon
