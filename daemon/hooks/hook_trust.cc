#include "daemon/hooks/hook_trust.h"

#include <algorithm>

#include "common/atomic_file.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/paths.h"
#include "daemon/policy/trusted_rules.h"

namespace agent::daemon::hooks {
namespace {

Mutex& StoreMutex() {
  static Mutex* mu = new Mutex;
  return *mu;
}

// The keys trusted for `project` while it is the directory it was (policy::ProjectIdentity): a
// project removed and another cloned at its path trusts none of them. An entry without an
// identity (the store's first format) trusts nothing.
std::vector<std::string> ListOf(const Json& projects, const std::string& project) {
  std::vector<std::string> out;
  auto it = projects.find(project);
  if (it == projects.end() || !it->is_object()) return out;
  const Json* identity = it->contains("identity") ? &(*it)["identity"] : nullptr;
  const std::string now = policy::ProjectIdentity(project);
  if (identity == nullptr || !identity->is_string() || now.empty() ||
      identity->get_ref<const std::string&>() != now) {
    return out;
  }
  auto keys = it->find("hooks");
  if (keys == it->end() || !keys->is_array()) return out;
  for (const Json& k : *keys) {
    if (k.is_string()) out.push_back(k.get<std::string>());
  }
  return out;
}

}  // namespace

std::string TrustedHooksPath() { return StateDir() + "/trusted-hooks.json"; }

std::set<std::string> TrustedHookKeys(const std::string& path, const std::string& project) {
  std::vector<std::string> list = ListOf(policy::ReadTrustStoreProjects(path), project);
  return {list.begin(), list.end()};
}

absl::StatusOr<std::vector<std::string>> TrustHooks(const std::string& path,
                                                    const std::string& project,
                                                    const std::vector<std::string>& keys) {
  MutexLock l(&StoreMutex());
  Json projects = policy::ReadTrustStoreProjects(path);
  std::vector<std::string> list = ListOf(projects, project);
  std::vector<std::string> added;
  for (const std::string& k : keys) {
    if (std::find(list.begin(), list.end(), k) != list.end()) continue;
    list.push_back(k);
    added.push_back(k);
  }
  if (added.empty()) return added;
  const std::string identity = policy::ProjectIdentity(project);
  if (identity.empty()) {
    return absl::FailedPreconditionError("cannot read what identifies " + project);
  }
  projects[project] = Json{{"identity", identity}, {"hooks", list}};
  if (auto s = policy::WriteTrustStoreProjects(path, projects); !s.ok()) return s;
  return added;
}

absl::StatusOr<int> RevokeHooks(const std::string& path, const std::string& project) {
  MutexLock l(&StoreMutex());
  Json projects = policy::ReadTrustStoreProjects(path);
  const int n = static_cast<int>(ListOf(projects, project).size());
  if (!projects.contains(project)) return 0;
  projects.erase(project);
  if (auto s = policy::WriteTrustStoreProjects(path, projects); !s.ok()) return s;
  return n;
}

}  // namespace agent::daemon::hooks
