// Checkpointer: one session's file checkpoints. At the start of a turn it snapshots the
// project in the background (the first model request runs meanwhile); the turn's first tool
// waits for it (BeforeTool). At the end of a turn that ran a tool it snapshots again and, when
// the files changed, records a checkpoint (checkpoint_log.h) and keeps both trees in the store
// (shadow_store.h), pruned by age and count and, past max_store_mb on disk, packed and pruned
// further. Every snapshot checks the limits first (files over max_file_mb are left out, and
// said so in Diff and Undo; a project over max_project_mb or max_files is skipped for that
// turn), so a turn's checkpoint cost is bounded. Undo, RestoreFrom and Diff work from the
// records.
//
// Threading: the turn thread calls BeginTurn and EndTurn; tool threads BeforeTool; RPC
// threads the rest (the session makes sure no turn runs during Undo/RestoreFrom). `mu_` is
// held only briefly, never across git calls.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/config.h"
#include "common/mutex.h"
#include "daemon/checkpoints/checkpoint_log.h"
#include "daemon/checkpoints/shadow_store.h"

namespace agent::daemon::checkpoints {

struct UndoResult {
  std::vector<agent::v1::FileChange> files;  // what the turns changed, as the turns did it
  bool restored = false;
  std::string message;
  int first_turn = 0, last_turn = 0;  // the turns undone
};

class Checkpointer {
 public:
  // `stores_root`: where project stores live ($XDG_STATE_HOME/agent/checkpoints).
  Checkpointer(std::string workdir, std::string session_id, CheckpointConfig config,
               std::string stores_root);
  ~Checkpointer();  // waits for a snapshot in flight
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  void BeginTurn(int turn, int at_message, std::string_view prompt, int64_t now_ms)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until the turn's before-snapshot exists (or failed).
  void BeforeTool() ABSL_LOCKS_EXCLUDED(mu_);
  // Notices for the people attached: why checkpoints are skipped (once per session).
  std::vector<std::string> EndTurn(int64_t now_ms) ABSL_LOCKS_EXCLUDED(mu_);

  // The transcript's messages [first, first + removed) became one summary: the turns' message
  // positions move with it (a turn that began inside the summary now begins at it), so a
  // rewind to a message still restores the turns from that message on.
  void Compacted(int first, int removed) ABSL_LOCKS_EXCLUDED(mu_);

  // The checkpoints in effect (not undone), oldest first.
  std::vector<CheckpointRecord> List() const ABSL_LOCKS_EXCLUDED(mu_);
  // Restores the files to their state before the last `turns` checkpointed turns. A file
  // changed since the last of them ended is listed changed_since and kept unless `overwrite`.
  // FailedPrecondition when there is nothing to undo or the checkpoint was pruned.
  absl::StatusOr<UndoResult> Undo(int turns, bool dry_run, bool overwrite) ABSL_LOCKS_EXCLUDED(mu_);
  // The same for every checkpointed turn that began at or after message `at_message`.
  absl::StatusOr<UndoResult> RestoreFrom(int at_message, bool dry_run, bool overwrite)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Turn 0: from before the session's first checkpointed turn to the files now; turn N: what
  // that turn changed (empty when it changed nothing).
  absl::StatusOr<std::string> Diff(int turn) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct PendingTurn {
    CheckpointRecord record;
    std::shared_future<absl::StatusOr<std::string>> before;
  };
  // The project's store, opened on first use; the reason when checkpoints are off.
  absl::StatusOr<std::shared_ptr<const ShadowStore>> Store() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::string> TakeBefore() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<UndoResult> RestoreRange(std::vector<size_t> indexes, bool dry_run, bool overwrite)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Record(const ShadowStore& store, CheckpointRecord record, int64_t now_ms)
      ABSL_LOCKS_EXCLUDED(mu_);
  void LimitStoreSize(const ShadowStore& store, int64_t now_ms, int64_t max_age_ms)
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::string workdir_;
  const std::string session_id_;
  const CheckpointConfig config_;
  const std::string stores_root_;

  mutable agent::Mutex mu_;
  std::shared_ptr<const ShadowStore> store_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> off_ ABSL_GUARDED_BY(mu_);  // set: checkpoints skipped, why
  bool off_told_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<CheckpointRecord> records_ ABSL_GUARDED_BY(mu_);
  std::optional<PendingTurn> pending_ ABSL_GUARDED_BY(mu_);
  // Snapshots of turns that ran no tool, left to finish on their own: such a turn ends
  // without waiting for them. Dropped once ready (never blocking); the destructor waits.
  std::vector<std::shared_future<absl::StatusOr<std::string>>> draining_ ABSL_GUARDED_BY(mu_);
  bool tool_ran_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace agent::daemon::checkpoints
