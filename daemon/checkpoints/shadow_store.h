// ShadowStore: a content-addressed copy of a project's files in a git object store of our
// own, $XDG_STATE_HOME/agent/checkpoints/<name>-<hash of the project root>/, never inside the
// project. A snapshot is a git tree id: unchanged files cost nothing, the private index's stat
// cache makes a snapshot of an unchanged project cheap. The user's repository (its .git, index,
// branches, stash) is never read or written, except .git/info/exclude, copied as ignore rules.
// What is recorded: the project's files that its .gitignore files do not ignore, never .git/
// or .agent/sessions/. Regular files with their exec bit, symlinks as symlinks. Within limits
// (SnapshotLimits), checked before every snapshot: a file over the size limit is left out
// (never read or hashed: a new one is excluded, one recorded before keeps its recorded
// content, so no checkpoint says it changed and no restore writes it), and a project over the
// total size or file count gets no snapshot at all. So one snapshot hashes at most the total.
// Thread-safe: every call takes an flock on the store, so sessions (and daemons) sharing a
// project serialise; calls block on git.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon::checkpoints {

// One path that differs between two trees. Modes are git's: "100644", "100755", "120000"
// (symlink), "160000" (a nested repository, never restored); "000000": absent.
struct TreeChange {
  std::string path;
  std::string old_mode, new_mode;
  std::string old_blob, new_blob;
  // "created", "deleted", "modified" or "mode" (only the exec bit changed), from old to new.
  std::string Kind() const;
};

struct SnapshotLimits {
  uint64_t max_file_bytes = 0;   // a larger file is left out; 0: none is
  uint64_t max_total_bytes = 0;  // of the files recorded, together; 0: no limit
  size_t max_files = 0;          // files recorded; 0: no limit
};

class ShadowStore {
 public:
  // The store of the project at `project_root` (an existing directory) under `stores_root`
  // (created 0700, checked to be ours); made on first use.
  static absl::StatusOr<ShadowStore> Open(const std::string& project_root,
                                          const std::string& stores_root);

  // What Snapshot records (set before the store is shared).
  void set_limits(const SnapshotLimits& limits) { limits_ = limits; }
  const SnapshotLimits& limits() const { return limits_; }

  // The project's files now, as a tree id; `left_out`, when given, gets the files left out
  // for their size (sorted). FailedPrecondition when the project is over the total size or
  // the file count (nothing was hashed).
  absl::StatusOr<std::string> Snapshot(std::vector<std::string>* left_out = nullptr) const;
  // The paths that differ from tree `from` to tree `to`.
  absl::StatusOr<std::vector<TreeChange>> Changes(const std::string& from,
                                                  const std::string& to) const;
  // A unified diff from tree `from` to tree `to` (a/ and b/ prefixes, no colours).
  absl::StatusOr<std::string> Diff(const std::string& from, const std::string& to) const;
  // The contents of the blobs, in order.
  absl::StatusOr<std::vector<std::string>> Blobs(const std::vector<std::string>& ids) const;
  bool HasObject(const std::string& id) const;
  // Keeps trees `before` and `after` alive under the name `label` ([A-Za-z0-9_-]), which
  // starts with the unix ms they were taken at (Prune reads it).
  absl::Status Keep(const std::string& label, int64_t unix_ms, const std::string& before,
                    const std::string& after) const;
  // Keeps `tree` alive under `label` until the next Pin of that label: a running turn's
  // before-snapshot, which another session's Prune must not take before Keep names it.
  absl::Status Pin(const std::string& label, const std::string& tree) const;
  // Forgets what Keep recorded before `now_ms - max_age_ms`, and all but the newest
  // `max_count`, then deletes the objects nothing keeps. Returns how many were forgotten.
  absl::StatusOr<int> Prune(int64_t now_ms, int64_t max_age_ms, int max_count) const;
  // Packs the loose objects and deletes those nothing keeps: the store's disk use, after
  // Prune, is then close to what its kept trees need.
  absl::Status Pack() const;

  const std::string& dir() const { return dir_; }
  const std::string& project_root() const { return root_; }

 private:
  ShadowStore(std::string root, std::string dir) : root_(std::move(root)), dir_(std::move(dir)) {}
  absl::StatusOr<std::string> Git(std::vector<std::string> args, std::string input = "") const;
  // Writes info/exclude (our rules, the user's .git/info/exclude, then `extra`) and
  // info/attributes.
  absl::Status WriteExcludes(const std::string& extra = "") const;
  // Leaves the files over the size limit out of the next `git add` (store lock held).
  absl::Status LeaveOut(const std::vector<std::string>& tracked_big,
                        const std::vector<std::string>& untracked_big,
                        const std::vector<std::string>& tracked_skipped) const;

  std::string root_;  // canonical
  std::string dir_;
  SnapshotLimits limits_;
};

// $XDG_STATE_HOME/agent/checkpoints: where the daemon's project stores live.
std::string StoresRoot();
// The store directory name for a project: its last path component (letters, digits, . _ -)
// and a hash of its canonical path.
std::string StoreName(const std::string& canonical_root);
// Bytes on disk under `dir` (no symlink followed); 0 when missing.
uint64_t DirectoryBytes(const std::string& dir);

}  // namespace agent::daemon::checkpoints
