// SessionSaver: a session's writes to disk, made after the session's mutex is released.
//
// Under the session's mutex the session says what changed (Queue, QueueMeta: copies of the new
// lines, no I/O); the thread that queued them calls Flush once it released the mutex
// (SessionState::WriteSaves), and the writes are made in the order they were queued, one writer
// at a time. So the turn thread has its messages on disk before its next step, and a slow or
// failing disk never holds the session's lock.
//
// A message is appended to the journal (constant cost, daemon/store/transcript_journal.h); a change
// that is not an append (compaction, a fork, a new system prompt), an explicit whole save (at
// idle, at shutdown) and the first save after a failed write (the journal may end in a torn
// line) write <id>.json whole. What could not be written stays unsaved() until a later save
// succeeds: the session keeps it in memory, retries, and says so. A whole write that fails
// after the journal took every message loses nothing: the messages are on disk, only the
// folding into <id>.json waits for the next save.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/mutex.h"
#include "common/transcript.h"
#include "daemon/session/files.h"
#include "daemon/store/store.h"

namespace agent::daemon {

class SessionSaver final {
 public:
  // What a write did. `messages_on_disk`: every message queued so far can be loaded from the
  // files (true after a failure too when the journal already held them).
  struct Outcome {
    absl::Status status;
    bool messages_on_disk = true;
  };
  // `on_change(outcome)`: called after a write (no lock of the saver held) whenever the outcome
  // differs from the previous write's, and after every failure (so each one is logged).
  SessionSaver(std::unique_ptr<SessionFiles> files, std::function<void(const Outcome&)> on_change);
  SessionSaver(const SessionSaver&) = delete;
  SessionSaver& operator=(const SessionSaver&) = delete;

  // Under the session's mutex. Queues what `t` gained since the last Queue, or all of it when
  // `whole` or when the new lines cannot simply be appended; Flush writes it.
  void Queue(const Transcript& t, bool whole) ABSL_LOCKS_EXCLUDED(q_mu_);
  void QueueMeta(SessionMeta meta) ABSL_LOCKS_EXCLUDED(q_mu_);
  // The session's files are deleted on purpose: nothing queued is written, nothing later. With
  // `delete_files`, the next Flush deletes them.
  void Drop(bool delete_files = false) ABSL_LOCKS_EXCLUDED(q_mu_);

  // Messages queued but not written yet, or not on disk after a failed write (the next Queue
  // is whole).
  bool unsaved() const ABSL_LOCKS_EXCLUDED(q_mu_);
  // Why unsaved(): the failed write's error, or that the newest messages are still queued.
  // OK when nothing is unsaved.
  absl::Status last_error() const ABSL_LOCKS_EXCLUDED(q_mu_);

  // Writes what is queued. Any thread, holding no session mutex.
  absl::Status Flush() ABSL_LOCKS_EXCLUDED(io_mu_, q_mu_);

 private:
  struct Work {
    std::optional<std::string> whole;  // the file text, written before `lines`
    std::string lines;                 // journal lines appended after it
    size_t upto = 0;                   // messages on disk once both are written
    uint64_t rewrites = 0;             // Transcript::rewrites() of those messages
    std::optional<SessionMeta> meta;
    bool delete_files = false;  // instead of everything else
    bool empty() const { return !whole && lines.empty() && !meta && !delete_files; }
  };

  const std::unique_ptr<SessionFiles> files_;
  const std::function<void(const Outcome&)> on_change_;
  agent::Mutex io_mu_ ABSL_ACQUIRED_BEFORE(q_mu_);  // held while writing: one writer, in order
  mutable agent::Mutex q_mu_;
  Work queued_ ABSL_GUARDED_BY(q_mu_);
  bool started_ ABSL_GUARDED_BY(q_mu_) = false;     // a whole text was queued once
  size_t covered_ ABSL_GUARDED_BY(q_mu_) = 0;       // messages queued so far
  uint64_t rewrites_ ABSL_GUARDED_BY(q_mu_) = 0;    // Transcript::rewrites() then
  bool need_whole_ ABSL_GUARDED_BY(q_mu_) = false;  // a write failed: the next Queue is whole
  bool dropped_ ABSL_GUARDED_BY(q_mu_) = false;
  // What the files hold for certain: this many messages, of that rewrite of the transcript.
  size_t on_disk_ ABSL_GUARDED_BY(q_mu_) = 0;
  uint64_t on_disk_rewrites_ ABSL_GUARDED_BY(q_mu_) = 0;
  bool lost_ ABSL_GUARDED_BY(q_mu_) = false;        // queued messages not on disk after a failure
  absl::Status lost_error_ ABSL_GUARDED_BY(q_mu_);  // the failure that left them off it
  absl::Status last_ ABSL_GUARDED_BY(q_mu_);        // the last write's outcome
};

}  // namespace agent::daemon
