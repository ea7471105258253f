// SessionManager: the daemon's sessions by id, loaded on demand from the projects it has
// seen, and the registry of those projects ($XDG_STATE_HOME/agent/projects.json) that lets
// `agent ls --all` work after a restart. Thread-safe (one mutex; sessions have their own).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/session.h"

namespace agent::daemon {

class SessionManager {
 public:
  explicit SessionManager(SessionDeps deps);
  ~SessionManager();

  absl::StatusOr<std::shared_ptr<Session>> Create(const agent::v1::CreateSessionRequest& req);
  // By id or unique id prefix; loads the session when it is not loaded yet. NotFound,
  // InvalidArgument (ambiguous prefix), DataLoss (damaged file, named), FailedPrecondition
  // (owned by another daemon).
  absl::StatusOr<std::shared_ptr<Session>> Find(const std::string& id_or_prefix);
  // Sessions of `workdir` (or of every known project), newest first. Damaged files are
  // listed with load_error set instead of failing the call.
  std::vector<agent::v1::Session> List(const std::string& workdir, bool all);
  absl::StatusOr<std::shared_ptr<Session>> Fork(const std::string& id, int at_message);
  absl::Status Delete(const std::string& id);
  // Ends every turn cleanly (sealed, saved).
  void ShutdownAll();

  int loaded_count() const;
  // The problems that stop gated tools in loaded sessions (broken rule files), without repeats.
  std::vector<std::string> RuleProblems() const;
  int attached_count() const;

 private:
  SessionSettings DefaultSettings() const;
  void RegisterProject(const std::string& workdir) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> Projects() const ABSL_LOCKS_EXCLUDED(mu_);
  // Full id and workdir of the saved session matching the prefix.
  absl::StatusOr<std::pair<std::string, std::string>> Resolve(const std::string& prefix);

  SessionDeps deps_;
  std::string registry_path_;
  mutable agent::Mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> projects_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon
