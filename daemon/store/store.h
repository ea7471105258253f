// Store: a session's files in the project's sessions directory (daemon/store/sessions_dir.h,
// $XDG_STATE_HOME/agent/projects/<project key>/sessions/).
//   <id>.json             the transcript, exactly the message list sent to the model
//   <id>.journal          the messages appended since <id>.json was written whole
//                         (daemon/store/transcript_journal.h); replayed by LoadTranscript
//   <id>.meta.json        title, model, workdir, times, parent, counters
//   <id>.compacted.jsonl  what compaction removed, with the summary that replaced it
//   <id>.lock             advisory lock: one daemon owns a session at a time
//   <id>.journal-set-aside-<ms>.jsonl  journal lines that could not be replayed, kept for the
//                         person (LoadTranscript)
// Every write is atomic (common/atomic_file.h). The directories below the state directory must
// be real directories owned by us, and no file in them is opened through a symlink
// (PermissionDenied naming the path). `workdir` is the canonical project path. Stateless
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "common/transcript.h"

namespace agent::daemon {

struct SessionMeta {
  std::string id;
  std::string workdir;
  std::string title;
  std::string model;
  std::string parent_id;
  std::string cwd;    // where tools run, inside workdir; empty: workdir
  std::string agent;  // a child session's agent definition (the `task` tool); empty: none
  int depth = 0;      // how deep a child is below the session the person started
  int64_t created_unix_ms = 0;
  int64_t updated_unix_ms = 0;
  int64_t message_count = 0;
  int64_t turns = 0;
  int64_t tool_calls = 0;
  int64_t compactions = 0;
  int64_t prompt_tokens = 0;      // last request
  int64_t completion_tokens = 0;  // sum over the session
  Json context = Json::object();  // usage totals, instructions, plan (context::SessionContext)
  // What the model read of which file (tools::FileTracker::ToJson), so an edit after a restart
  // still knows whether the file changed since.
  Json files_seen = Json::object();

  Json ToJson() const;
  static SessionMeta FromJson(const Json& j);
};

std::string SessionsDir(const std::string& workdir);
std::string TranscriptPath(const std::string& workdir, const std::string& id);
std::string MetaPath(const std::string& workdir, const std::string& id);

// Writes the transcript whole (synced) and starts its journal anew.
absl::Status SaveTranscript(const std::string& workdir, const std::string& id,
                            const Json& messages);
// The same from a Transcript, reusing its serialised messages.
absl::Status SaveTranscript(const std::string& workdir, const std::string& id,
                            const Transcript& transcript);
// The same from the file's text (Transcript::FileText).
absl::Status SaveTranscriptText(const std::string& workdir, const std::string& id,
                                std::string_view file_text);
// Appends serialised messages, one per line each ending in "\n", to the journal (synced): the
// cost of saving a message, whatever the length of the transcript.
absl::Status AppendJournal(const std::string& workdir, const std::string& id,
                           std::string_view lines);
// The journal opened O_WRONLY | O_APPEND (created when missing), for a session that keeps it
// open while it is loaded (AppendOnlyFile).
absl::StatusOr<int> OpenJournalForAppend(const std::string& workdir, const std::string& id);
// The journal's path, to name it in errors.
std::string JournalPath(const std::string& workdir, const std::string& id);
absl::Status SaveMeta(const SessionMeta& meta);
// Appends one JSON line {"unix_ms", "summary", "removed": [...]}.
absl::Status AppendCompacted(const std::string& workdir, const std::string& id, const Json& removed,
                             const std::string& summary);

// What replaying a session's journal found (daemon/store/transcript_journal.h).
struct JournalReport {
  int replayed = 0;            // records replayed
  int repeats = 0;             // records written twice, replayed once
  int set_aside_lines = 0;     // lines that could not be replayed, from the first bad one on
  std::string set_aside_path;  // where those lines are kept (never overwritten); empty: none
  std::string why;             // what the first of them broke
  // Replaying changed the journal's meaning: the session must be written whole at once, or
  // its next records would follow the bad ones.
  bool NeedsRewrite() const { return repeats > 0 || !set_aside_path.empty(); }
  // For the person and the log: what was set aside, where, and how to bring it back; empty
  // when nothing was.
  std::string Note(const std::string& id) const;
};

// The saved transcript with its journal replayed (its open tail, if any, still open); DataLoss
// naming the file when it is not JSON, not a message list, or breaks the transcript rule.
// Journal records that do not replay are written to <id>.journal-set-aside-<ms>.jsonl and named
// in `report`.
absl::StatusOr<Transcript> LoadTranscript(const std::string& workdir, const std::string& id,
                                          JournalReport* report = nullptr);
absl::StatusOr<SessionMeta> LoadMeta(const std::string& workdir, const std::string& id);
// The messages a load of `meta`'s session would find: meta.message_count, unless the transcript
// or its journal was written after the meta file (a crash between the two, a failed meta
// write); then they are read and counted. Writes nothing.
int64_t SavedMessageCount(const std::string& workdir, const SessionMeta& meta);
// Ids of the sessions saved in `workdir` (those with a transcript file); none when the
// sessions directory is missing or refused (a symlink, say).
std::vector<std::string> ListSessionIds(const std::string& workdir);
absl::Status DeleteSessionFiles(const std::string& workdir, const std::string& id);

// An exclusive advisory lock on <id>.lock, held while the object lives. FailedPrecondition
// when another process holds it.
class SessionLock {
 public:
  static absl::StatusOr<SessionLock> Acquire(const std::string& workdir, const std::string& id);
  SessionLock() = default;  // holds nothing
  SessionLock(SessionLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  SessionLock& operator=(SessionLock&& other) noexcept;
  SessionLock(const SessionLock&) = delete;
  SessionLock& operator=(const SessionLock&) = delete;
  ~SessionLock();

 private:
  explicit SessionLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace agent::daemon
