#include "daemon/session_manager.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "common/paths.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

ModelSettings FromProto(const v1::ModelConfig& m) {
  ModelSettings s;
  s.base_url = m.base_url();
  s.api_key = m.api_key();
  s.model = m.model();
  s.provider = m.provider();
  return s;
}

}  // namespace

SessionManager::SessionManager(SessionDeps deps)
    : deps_(std::move(deps)), registry_path_(StateDir() + "/projects.json") {
  if (auto text = ReadFileToString(registry_path_); text.ok()) {
    if (auto j = ParseJson(*text);
        j.ok() && j->contains("projects") && (*j)["projects"].is_array()) {
      for (const Json& p : (*j)["projects"]) {
        if (p.is_string()) projects_.push_back(p.get<std::string>());
      }
    }
  }
}

SessionManager::~SessionManager() { ShutdownAll(); }

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
  std::string workdir = AbsolutePath(req.workdir());
  std::error_code ec;
  if (req.workdir().empty() || !std::filesystem::is_directory(workdir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("not a directory: ", req.workdir()));
  }
  workdir = std::filesystem::canonical(workdir, ec).string();
  SessionSettings settings;
  settings.model = MergeModelSettings(FromProto(req.model()), deps_.config.model);
  settings.policy =
      req.policy() == v1::POLICY_MODE_UNSPECIFIED ? v1::POLICY_MODE_ASK : req.policy();
  settings.max_steps = req.max_steps();
  auto s = Session::Create(workdir, std::move(settings), req.title(), deps_);
  if (!s.ok()) return s.status();
  (*s)->SetToolEnvironment(req.tool_env());  // before any client can find it
  RegisterProject(workdir);
  agent::MutexLock l(&mu_);
  sessions_[(*s)->id()] = *s;
  return *s;
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
  {
    agent::MutexLock l(&mu_);
    if (auto it = sessions_.find(id_or_prefix); it != sessions_.end()) return it->second;
  }
  auto where = Resolve(id_or_prefix);
  if (!where.ok()) return where.status();
  agent::MutexLock l(&mu_);
  if (auto it = sessions_.find(where->first); it != sessions_.end()) return it->second;
  auto s = Session::Load(where->second, where->first, DefaultSettings(), deps_);
  if (!s.ok()) return s.status();
  sessions_[where->first] = *s;
  return *s;
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
        if (auto it = sessions_.find(id); it != sessions_.end()) loaded = it->second;
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
        info.set_message_count(static_cast<int>(meta->message_count));
        info.set_parent_id(meta->parent_id);
      } else {
        info.set_load_error(std::string(meta.status().message()));
      }
      out.push_back(std::move(info));
    }
  }
  std::sort(out.begin(), out.end(), [](const v1::Session& a, const v1::Session& b) {
    return a.updated_unix_ms() > b.updated_unix_ms();
  });
  return out;
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Fork(const std::string& id,
                                                              int at_message) {
  auto source = Find(id);
  if (!source.ok()) return source.status();
  auto s = Session::Fork(**source, at_message, deps_);
  if (!s.ok()) return s.status();
  agent::MutexLock l(&mu_);
  sessions_[(*s)->id()] = *s;
  return *s;
}

absl::Status SessionManager::Delete(const std::string& id) {
  auto s = Find(id);
  if (!s.ok()) return s.status();
  std::string full = (*s)->id();
  std::string workdir = (*s)->workdir();
  if ((*s)->Busy()) return absl::FailedPreconditionError("the session is running; cancel it first");
  {
    agent::MutexLock l(&mu_);
    sessions_.erase(full);
  }
  (*s)->Shutdown("the session was deleted");
  return DeleteSessionFiles(workdir, full);
}

void SessionManager::ShutdownAll() {
  std::map<std::string, std::shared_ptr<Session>> sessions;
  {
    agent::MutexLock l(&mu_);
    sessions = sessions_;
  }
  for (auto& [id, s] : sessions) s->Shutdown("interrupted: the daemon stopped");
}

int SessionManager::loaded_count() const {
  agent::MutexLock l(&mu_);
  return static_cast<int>(sessions_.size());
}

std::vector<std::string> SessionManager::RuleProblems() const {
  std::map<std::string, std::shared_ptr<Session>> sessions;
  {
    agent::MutexLock l(&mu_);
    sessions = sessions_;
  }
  std::vector<std::string> problems;
  for (const auto& [id, s] : sessions) {
    absl::Status st = s->RulesProblem();
    if (st.ok()) continue;
    std::string p(st.message());
    if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(p);
  }
  return problems;
}

int SessionManager::attached_count() const {
  agent::MutexLock l(&mu_);
  int n = 0;
  for (const auto& [id, s] : sessions_) n += s->attached_clients();
  return n;
}

}  // namespace agent::daemon
