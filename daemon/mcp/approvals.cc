#include "daemon/mcp/approvals.h"

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/paths.h"

namespace agent::daemon::mcp {
namespace {

Mutex& FileMutex() {
  static Mutex* mu = new Mutex;
  return *mu;
}

// The record's entries; a missing or unreadable file is no approvals (fail closed).
Json ReadEntries() {
  absl::StatusOr<std::string> text = ReadFileToString(ApprovalsPath());
  if (!text.ok()) return Json::array();
  absl::StatusOr<Json> j = ParseJson(*text);
  if (!j.ok() || !j->is_object() || !(*j)["approved"].is_array()) return Json::array();
  return (*j)["approved"];
}

}  // namespace

std::string ApprovalsPath() { return StateDir() + "/mcp-approvals.json"; }

bool IsApproved(const ServerDef& server) {
  if (server.scope != "project") return true;
  MutexLock l(&FileMutex());
  for (const Json& e : ReadEntries()) {
    if (GetString(e, "identity") == server.Identity()) return true;
  }
  return false;
}

absl::Status RecordApproval(const ServerDef& server) {
  MutexLock l(&FileMutex());
  Json entries = ReadEntries();
  Json kept = Json::array();
  for (Json& e : entries) {
    if (GetString(e, "project") == server.project && GetString(e, "name") == server.name) continue;
    kept.push_back(std::move(e));
  }
  kept.push_back({{"project", server.project},
                  {"name", server.name},
                  {"target", server.Target()},
                  {"identity", server.Identity()}});
  if (auto s = MakeDirs(StateDir()); !s.ok()) return s;
  return WriteFileAtomically(ApprovalsPath(), DumpJson(Json{{"approved", kept}}, 2) + "\n");
}

}  // namespace agent::daemon::mcp
