// Remembers what the agent last saw of each file, so a write never clobbers changes made
// behind its back (by the user, an editor or a build). One per session. Thread-safe: read-only
// tools record reads concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/json.h"
#include "common/mutex.h"

namespace agent::daemon::tools {

class FileTracker {
 public:
  FileTracker() = default;
  FileTracker(const FileTracker&) = delete;
  FileTracker& operator=(const FileTracker&) = delete;

  // The agent has seen `content` as the whole of `abs_path` (a read with offset/limit counts:
  // the tool read the whole file to number its lines).
  void RecordRead(const std::string& abs_path, std::string_view content);
  // The agent wrote `content`; it counts as known, so a following edit needs no new read.
  void RecordWrite(const std::string& abs_path, std::string_view content);
  // Compares the file on disk with what the agent knows. OK when the file does not exist
  // (nothing to lose), or when it matches. kFailedPrecondition:
  //   "<name> changed since you read it; read it again"
  //   "read <name> before editing it"  (only when must_have_read and never seen)
  // `display` names the file in messages; empty means `abs_path`.
  absl::Status CheckUnchanged(const std::string& abs_path, bool must_have_read,
                              std::string_view display = {}) const;
  // The same check against `current`, the file's content the caller has just read.
  absl::Status CheckKnown(const std::string& abs_path, std::string_view current,
                          bool must_have_read, std::string_view display = {}) const;
  bool HasSeen(const std::string& abs_path) const;
  void Forget(const std::string& abs_path);

  // What it knows, to be kept with the session (its meta file), so that a session the daemon
  // loads again still knows what the model read: {"<abs path>": {"hash": "<16 hex>", "size":
  // n}}, at most kMaxKept files.
  Json ToJson() const;
  // Takes in what ToJson gave, for files strictly inside `workdir` only (the rest, and anything
  // malformed, is skipped: a stale entry at worst costs the model a read).
  void LoadJson(const Json& j, const std::string& workdir);
  static constexpr size_t kMaxKept = 10000;

  // FNV-1a 64: fast, stable across runs; collisions are harmless here beyond a missed warning.
  static uint64_t Hash(std::string_view content);

 private:
  struct Seen {
    uint64_t hash = 0;
    uint64_t size = 0;
  };
  mutable agent::Mutex mu_;
  std::unordered_map<std::string, Seen> seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon::tools
