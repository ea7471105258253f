// SessionManager: the daemon's sessions by id, loaded on demand from the projects it has
// seen, and the registry of those projects ($XDG_STATE_HOME/agent/projects.json) that lets
// `agent ls --all` work after a restart.
//
// Memory: a loaded session with no attached client, no turn, no queued prompt and no RPC
// holding it is unloaded once it has been so for `idle_unload` (AGENT_SESSION_IDLE_UNLOAD_S,
// default 10 min). Its files stay; `List` shows it from disk and `Find` loads it again. A small
// thread of the manager's sweeps; after unloading it returns freed heap to the OS
// (malloc_trim), so a spike of tool output does not stay in the daemon's RSS.
//
// Thread-safety: all methods may be called from any thread. `mu_` guards the map only and is
// never held while a session is read from disk or closed: a slow load blocks the lookups of
// that id only (they share its result), never another id. Lock order: `mu_`, then a session's.
#pragma once

#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/session/session.h"
#include "daemon/subagents/session_directory.h"

namespace agent::daemon {

struct SessionManagerOptions {
  // How long a session must be idle and detached before it is unloaded; infinite: never.
  absl::Duration idle_unload = absl::InfiniteDuration();
  // Sweep on a thread of the manager's (every idle_unload / 4, within [10 ms, 30 s]). Tests
  // may turn it off and call SweepIdle themselves.
  bool sweep_thread = true;
  // For tests: hooks called outside every lock: just before a session is read from disk, when
  // a Find starts waiting for another's load of the same id, and after a session was unloaded
  // (its files closed and its lock released). Idle time is measured on deps.clock.
  std::function<void(const std::string& id)> before_load;
  std::function<void(const std::string& id)> joined_load;
  std::function<void(const std::string& id)> after_unload;
};

class SessionManager : public subagents::SessionDirectory {
 public:
  // Unloads idle sessions after deps.config.session_idle_unload_s (0: never).
  explicit SessionManager(SessionDeps deps);
  SessionManager(SessionDeps deps, SessionManagerOptions options);
  // Stops the sweep thread, then ShutdownAll.
  ~SessionManager() override;

  absl::StatusOr<std::shared_ptr<Session>> Create(const agent::v1::CreateSessionRequest& req);
  // A child session (settings.child set, daemon/subagents/) in its parent's `workdir`: saved,
  // listed and found like any other.
  absl::StatusOr<std::shared_ptr<Session>> CreateChild(const std::string& workdir,
                                                       SessionSettings settings,
                                                       std::string title) override;
  // By id or unique id prefix; loads the session when it is not loaded yet. NotFound,
  // InvalidArgument (ambiguous prefix), DataLoss (damaged file, named), FailedPrecondition
  // (owned by another daemon). Concurrent Finds of one id share one load and one Session.
  absl::StatusOr<std::shared_ptr<Session>> Find(const std::string& id_or_prefix) override;
  // The session with the whole id `id` when it is loaded, without touching the disk or
  // waiting; null otherwise (then Find it where reading the disk and waiting are fine).
  std::shared_ptr<Session> FindLoaded(const std::string& id);
  // Sessions of `workdir` (or of every known project), newest first. Damaged files are
  // listed with load_error set instead of failing the call.
  std::vector<agent::v1::Session> List(const std::string& workdir, bool all);
  absl::StatusOr<std::shared_ptr<Session>> Fork(const std::string& id, int at_message);
  // Refuses a running session (FailedPrecondition). Attached clients are told (Session::Remove)
  // and later lookups of the id are NotFound saying it was removed.
  absl::Status Delete(const std::string& id, const std::string& by_client = "");
  // Ends every turn cleanly (sealed, saved), then the attached clients' streams (Unavailable,
  // or kDaemonStoppedCode); later Create and Find are Unavailable.
  // `stopped`: the daemon is stopped on purpose (`agent daemon stop`), not restarting, and the
  // streams end with kDaemonStoppedCode so attached clients leave instead of reconnecting.
  void ShutdownAll(bool stopped = false);

  // Writes again the sessions a failed save left with unsaved messages (the sweep does, each
  // round): they are never unloaded before that succeeds.
  void RetryUnsavedSaves() ABSL_LOCKS_EXCLUDED(mu_);
  // The same, now, for a stop: one line per session still unsaved after it, "<id>: <why>".
  std::vector<std::string> SaveUnsavedNow() ABSL_LOCKS_EXCLUDED(mu_);
  // Unloads the sessions idle and detached for `idle_unload`; returns how many. The sweep
  // thread calls it; tests with a fake clock call it directly.
  int SweepIdle() ABSL_LOCKS_EXCLUDED(mu_);

  // The daemon's defaults (its environment, then config.json).
  const Config& config() const { return deps_.config; }
  int loaded_count() const;
  // The problems that stop gated tools in loaded sessions (broken rule files) or leave project
  // allow rules ignored (nobody trusted them), without repeats.
  std::vector<std::string> RuleProblems() const;
  int attached_count() const;
  bool IsLoaded(const std::string& id) const;

 private:
  using LoadResult = absl::StatusOr<std::shared_ptr<Session>>;
  // A session id's entry: loaded, being loaded, or being unloaded (exactly one of the three).
  struct Slot {
    std::shared_ptr<Session> session;
    std::shared_future<LoadResult> loading;  // the result every Find of the id waits for
    std::shared_future<void> unloading;      // ready once the session's lock is released
    absl::Time last_used;                    // last Find or Create, or last seen in use
  };

  SessionSettings DefaultSettings() const;
  // Idle times are durations: on the clock that never steps.
  absl::Time Now() const { return deps_.clock->Monotonic(); }
  void RegisterProject(const std::string& workdir) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> Projects() const ABSL_LOCKS_EXCLUDED(mu_);
  // Full id and workdir of the saved session matching the prefix.
  absl::StatusOr<std::pair<std::string, std::string>> Resolve(const std::string& prefix);
  // The session `id` of `workdir`: the loaded one, the result of a load under way, or one
  // loaded now (outside the lock), after waiting for an unload under way.
  LoadResult LoadOrJoin(const std::string& id, const std::string& workdir) ABSL_LOCKS_EXCLUDED(mu_);
  LoadResult LoadAsOwner(const std::string& id, const std::string& workdir,
                         std::promise<LoadResult>& promise) ABSL_LOCKS_EXCLUDED(mu_);
  void Insert(const std::shared_ptr<Session>& s) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the slot's session may be unloaded now; refreshes last_used when it is in use.
  bool UnloadableLocked(Slot& slot, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SweepThreadMain() ABSL_LOCKS_EXCLUDED(mu_);

  SessionDeps deps_;
  SessionManagerOptions options_;
  std::string registry_path_;
  mutable agent::Mutex mu_;
  std::map<std::string, Slot> sessions_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> projects_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> removed_ ABSL_GUARDED_BY(mu_);  // recently deleted ids, bounded
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  agent::CondVar stop_cv_;  // wakes the sweep thread to stop
  std::thread sweeper_;
};

}  // namespace agent::daemon
