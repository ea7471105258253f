// A session's checkpoints: one record per turn that changed files, kept in <id>.checkpoints
// (JSON; not *.json, which names transcripts) beside the transcript in the project's sessions
// directory (daemon/store/sessions_dir.h; opened without following symlinks, like every session
// file). A record whose tree ids are not object ids is dropped on load (the file may have been
// edited by hand), and the trees are only ever looked up in our own store. Stateless
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon::checkpoints {

inline constexpr size_t kMaxLeftOut = 200;

struct CheckpointRecord {
  int turn = 0;        // the session's turn number, 1-based
  int at_message = 0;  // transcript length before the turn's prompt
  int64_t unix_ms = 0;
  std::string prompt;  // first line
  int files_changed = 0;
  std::string before;  // tree ids
  std::string after;
  bool undone = false;  // Undo restored `before`
  // Files over the size limit when the turn ended: not in its checkpoint (shadow_store.h),
  // so /diff does not show their changes and undo leaves them as they are. At most a few
  // hundred names are kept.
  std::vector<std::string> left_out;
};

std::string CheckpointsFileName(const std::string& session_id);
// The session's records, oldest first; none when there is no file.
absl::StatusOr<std::vector<CheckpointRecord>> LoadCheckpoints(const std::string& workdir,
                                                              const std::string& session_id);
absl::Status SaveCheckpoints(const std::string& workdir, const std::string& session_id,
                             const std::vector<CheckpointRecord>& records);

}  // namespace agent::daemon::checkpoints
