#include "daemon/checkpoints/checkpoint_log.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "daemon/store/sessions_dir.h"

namespace agent::daemon::checkpoints {
namespace {

bool IsObjectId(const std::string& s) {
  return s.size() == 40 &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

}  // namespace

std::string CheckpointsFileName(const std::string& session_id) {
  return session_id + ".checkpoints";
}

absl::StatusOr<std::vector<CheckpointRecord>> LoadCheckpoints(const std::string& workdir,
                                                              const std::string& session_id) {
  RETURN_IF_ERROR(CheckFileName(session_id));
  std::vector<CheckpointRecord> out;
  auto dir = OpenProjectSessionsDir(workdir, /*create=*/false);
  if (absl::IsNotFound(dir.status())) return out;
  if (!dir.ok()) return dir.status();
  auto text = ReadFileToString(*dir, CheckpointsFileName(session_id));
  if (absl::IsNotFound(text.status())) return out;
  if (!text.ok()) return text.status();
  auto j = ParseJson(*text);
  if (!j.ok() || !j->is_object() || !j->contains("checkpoints") ||
      !(*j)["checkpoints"].is_array()) {
    return absl::DataLossError(dir->PathOf(CheckpointsFileName(session_id)) +
                               ": not a checkpoint list");
  }
  for (const Json& c : (*j)["checkpoints"]) {
    if (!c.is_object()) continue;
    CheckpointRecord r;
    r.turn = static_cast<int>(GetInt(c, "turn", 0));
    r.at_message = static_cast<int>(GetInt(c, "at_message", 0));
    r.unix_ms = GetInt(c, "unix_ms", 0);
    r.prompt = GetString(c, "prompt");
    r.files_changed = static_cast<int>(GetInt(c, "files_changed", 0));
    r.before = GetString(c, "before");
    r.after = GetString(c, "after");
    r.undone = GetBool(c, "undone", false);
    if (auto it = c.find("left_out"); it != c.end() && it->is_array()) {
      for (const Json& p : *it) {
        if (p.is_string() && r.left_out.size() < kMaxLeftOut)
          r.left_out.push_back(p.get<std::string>());
      }
    }
    if (IsObjectId(r.before) && IsObjectId(r.after) && r.at_message >= 0) out.push_back(r);
  }
  return out;
}

absl::Status SaveCheckpoints(const std::string& workdir, const std::string& session_id,
                             const std::vector<CheckpointRecord>& records) {
  RETURN_IF_ERROR(CheckFileName(session_id));
  Json list = Json::array();
  for (const CheckpointRecord& r : records) {
    list.push_back({{"turn", r.turn},
                    {"at_message", r.at_message},
                    {"unix_ms", r.unix_ms},
                    {"prompt", r.prompt},
                    {"files_changed", r.files_changed},
                    {"before", r.before},
                    {"after", r.after},
                    {"undone", r.undone}});
    if (!r.left_out.empty()) list.back()["left_out"] = r.left_out;
  }
  ASSIGN_OR_RETURN(DirFd dir, OpenProjectSessionsDir(workdir, /*create=*/true));
  return WriteFileAtomically(dir, CheckpointsFileName(session_id),
                             Json{{"checkpoints", list}}.dump(1), Durability::kUnsynced);
}

}  // namespace agent::daemon::checkpoints
