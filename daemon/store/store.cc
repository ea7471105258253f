#include "daemon/store/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "common/reaction_scope.h"
#include "common/status_macros.h"
#include "daemon/store/sessions_dir.h"
#include "daemon/store/transcript_journal.h"

namespace agent::daemon {

Json SessionMeta::ToJson() const {
  Json j{{"id", id},
         {"workdir", workdir},
         {"title", title},
         {"model", model},
         {"parent_id", parent_id},
         {"cwd", cwd},
         {"created_unix_ms", created_unix_ms},
         {"updated_unix_ms", updated_unix_ms},
         {"message_count", message_count},
         {"turns", turns},
         {"tool_calls", tool_calls},
         {"compactions", compactions},
         {"prompt_tokens", prompt_tokens},
         {"completion_tokens", completion_tokens},
         {"context", context}};
  if (!files_seen.empty()) j["files_seen"] = files_seen;
  if (!agent.empty()) {  // a child session (daemon/subagents/)
    j["agent"] = agent;
    j["depth"] = depth;
  }
  return j;
}

SessionMeta SessionMeta::FromJson(const Json& j) {
  SessionMeta m;
  m.id = GetString(j, "id");
  m.workdir = GetString(j, "workdir");
  m.title = GetString(j, "title");
  m.model = GetString(j, "model");
  m.parent_id = GetString(j, "parent_id");
  m.cwd = GetString(j, "cwd");
  m.agent = GetString(j, "agent");
  m.depth = static_cast<int>(GetInt(j, "depth"));
  m.created_unix_ms = GetInt(j, "created_unix_ms");
  m.updated_unix_ms = GetInt(j, "updated_unix_ms");
  m.message_count = GetInt(j, "message_count");
  m.turns = GetInt(j, "turns");
  m.tool_calls = GetInt(j, "tool_calls");
  m.compactions = GetInt(j, "compactions");
  m.prompt_tokens = GetInt(j, "prompt_tokens");
  m.completion_tokens = GetInt(j, "completion_tokens");
  if (auto it = j.find("context"); it != j.end() && it->is_object()) m.context = *it;
  if (auto it = j.find("files_seen"); it != j.end() && it->is_object()) m.files_seen = *it;
  return m;
}

std::string SessionsDir(const std::string& workdir) { return ProjectSessionsDir(workdir); }
std::string TranscriptPath(const std::string& workdir, const std::string& id) {
  return absl::StrCat(SessionsDir(workdir), "/", id, ".json");
}
std::string MetaPath(const std::string& workdir, const std::string& id) {
  return absl::StrCat(SessionsDir(workdir), "/", id, ".meta.json");
}

namespace {

absl::StatusOr<DirFd> OpenSessionsDir(const std::string& workdir, bool create) {
  return OpenProjectSessionsDir(workdir, create);
}

absl::Status WriteSessionFile(const std::string& workdir, const std::string& name,
                              std::string_view content, Durability durability) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/true));
  return WriteFileAtomically(dir, name, content, durability);
}

absl::StatusOr<std::string> ReadSessionFile(const std::string& workdir, const std::string& name) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/false));
  return ReadFileToString(dir, name);
}

}  // namespace

absl::Status SaveTranscript(const std::string& workdir, const std::string& id,
                            const Json& messages) {
  // One message per line keeps the file readable in an editor and diffable, at a fraction
  // of the cost of full pretty-printing.
  std::vector<std::string> lines;
  lines.reserve(messages.size());
  for (const Json& m : messages) lines.push_back(DumpJson(m));
  return SaveTranscriptText(workdir, id, TranscriptFileText(lines));
}

absl::Status SaveTranscript(const std::string& workdir, const std::string& id,
                            const Transcript& transcript) {
  return SaveTranscriptText(workdir, id, transcript.FileText());
}

absl::Status SaveTranscriptText(const std::string& workdir, const std::string& id,
                                std::string_view file_text) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/true));
  RETURN_IF_ERROR(WriteFileAtomically(dir, id + ".json", file_text, Durability::kSynced));
  // Until this is written a journal of the older text may remain: it is stale, and ignored.
  return WriteFileAtomically(dir, id + ".journal", JournalHeader(file_text), Durability::kSynced);
}

absl::Status AppendJournal(const std::string& workdir, const std::string& id,
                           std::string_view lines) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/false));
  return AppendToFile(dir, id + ".journal", lines);
}

absl::StatusOr<int> OpenJournalForAppend(const std::string& workdir, const std::string& id) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/false));
  return dir.OpenFile(id + ".journal", O_WRONLY | O_CREAT | O_APPEND);
}

std::string JournalPath(const std::string& workdir, const std::string& id) {
  return absl::StrCat(SessionsDir(workdir), "/", id, ".journal");
}

absl::Status SaveMeta(const SessionMeta& meta) {
  // Meta is rebuilt from the transcript when lost, so it need not survive a power loss.
  return WriteSessionFile(meta.workdir, meta.id + ".meta.json", DumpJson(meta.ToJson(), 2) + "\n",
                          Durability::kUnsynced);
}

absl::Status AppendCompacted(const std::string& workdir, const std::string& id, const Json& removed,
                             const std::string& summary) {
  Json line{
      {"unix_ms", absl::ToUnixMillis(absl::Now())}, {"summary", summary}, {"removed", removed}};
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/true));
  return AppendToFile(dir, id + ".compacted.jsonl", DumpJson(line) + "\n");
}

namespace {

// Writes the journal's records that could not be replayed beside the session, under a name no
// earlier file has: they are the person's to look at, never overwritten.
absl::StatusOr<std::string> SetAsideJournal(const std::string& workdir, const std::string& id,
                                            std::string_view lines) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/false));
  const int64_t now = absl::ToUnixMillis(absl::Now());
  for (int n = 0; n < 100; ++n) {
    const std::string name =
        absl::StrCat(id, ".journal-set-aside-", now, n == 0 ? "" : absl::StrCat("-", n), ".jsonl");
    struct stat st;
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) continue;
    RETURN_IF_ERROR(WriteFileAtomically(dir, name, lines, Durability::kSynced));
    return dir.PathOf(name);
  }
  return absl::AlreadyExistsError("no free name for the set-aside journal records");
}

}  // namespace

absl::StatusOr<Transcript> LoadTranscript(const std::string& workdir, const std::string& id,
                                          JournalReport* report) {
  ASSIGN_OR_RETURN(const std::string text, ReadSessionFile(workdir, id + ".json"));
  absl::StatusOr<Transcript> t = Transcript::FromFileText(text);
  if (!t.ok()) {
    return absl::DataLossError(
        absl::StrCat(TranscriptPath(workdir, id), ": ", t.status().message()));
  }
  // The messages saved after the file was last written whole (a crash, a kill -9).
  absl::StatusOr<std::string> journal = ReadSessionFile(workdir, id + ".journal");
  if (!journal.ok()) return t;
  std::optional<Replayed> r = ReplayJournal(text, *t, *journal);
  if (!r.has_value()) return t;
  if (r->messages > 0) {
    absl::StatusOr<Transcript> replayed = Transcript::FromFileText(r->file_text);
    if (!replayed.ok()) {  // ReplayJournal checked each record: not expected
      return absl::InternalError(absl::StrCat(id, ".journal: ", replayed.status().message()));
    }
    t = std::move(replayed);
  }
  JournalReport local;
  JournalReport& out = report != nullptr ? *report : local;
  out.replayed = r->messages;
  out.repeats = r->repeats;
  out.why = r->why;
  out.set_aside_lines =
      static_cast<int>(std::count(r->set_aside.begin(), r->set_aside.end(), '\n'));
  if (!r->set_aside.empty()) {
    absl::StatusOr<std::string> path = SetAsideJournal(workdir, id, r->set_aside);
    // Not kept anywhere else: refusing the load keeps the journal as it is on disk.
    if (!path.ok()) {
      return absl::DataLossError(
          absl::StrCat(id, ".journal has records that do not replay (", r->why,
                       ") and they could not be set aside: ", path.status().message()));
    }
    out.set_aside_path = *path;
  }
  return t;
}

std::string JournalReport::Note(const std::string& id) const {
  if (set_aside_path.empty() && repeats == 0) return "";
  std::string note = absl::StrCat("session ", id, ": ");
  if (repeats > 0) {
    absl::StrAppend(&note, repeats, repeats == 1 ? " journal record was" : " journal records were",
                    " written twice and replayed once", set_aside_path.empty() ? "." : "; ");
  }
  if (!set_aside_path.empty()) {
    absl::StrAppend(&note, set_aside_lines, set_aside_lines == 1 ? " line" : " lines",
                    " of its journal could not be replayed (the first: ", why, ") and are kept in ",
                    set_aside_path,
                    "; the session goes on without them. To bring them back by hand: stop "
                    "agentd, repair those lines, append them to ",
                    id, ".journal in the same folder, and resume the session.");
  }
  return note;
}

absl::StatusOr<SessionMeta> LoadMeta(const std::string& workdir, const std::string& id) {
  ASSIGN_OR_RETURN(std::string text, ReadSessionFile(workdir, id + ".meta.json"));
  auto j = ParseJson(text);
  if (!j.ok() || !j->is_object()) {
    return absl::DataLossError(MetaPath(workdir, id) + ": not a JSON object");
  }
  SessionMeta m = SessionMeta::FromJson(*j);
  m.id = id;
  m.workdir = workdir;
  return m;
}

int64_t SavedMessageCount(const std::string& workdir, const SessionMeta& meta) {
  absl::StatusOr<DirFd> dir = OpenSessionsDir(workdir, /*create=*/false);
  if (!dir.ok()) return meta.message_count;
  auto mtime = [&dir](const std::string& name) -> std::optional<struct timespec> {
    struct stat st;
    if (::fstatat(dir->fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    return st.st_mtim;
  };
  auto newer = [](const struct timespec& a, const struct timespec& b) {
    return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
  };
  const std::optional<struct timespec> meta_time = mtime(meta.id + ".meta.json");
  const std::optional<struct timespec> file_time = mtime(meta.id + ".json");
  const std::optional<struct timespec> journal_time = mtime(meta.id + ".journal");
  const bool stale = !meta_time || (file_time && newer(*file_time, *meta_time)) ||
                     (journal_time && newer(*journal_time, *meta_time));
  if (!stale) return meta.message_count;
  // Written after the meta file (a crash between the two, a failed meta write): count what
  // a load would find, without a load's side effects.
  absl::StatusOr<std::string> text = ReadFileToString(*dir, meta.id + ".json");
  if (!text.ok()) return meta.message_count;
  absl::StatusOr<Transcript> t = Transcript::FromFileText(*text);
  if (!t.ok()) return meta.message_count;
  int64_t count = static_cast<int64_t>(t->size());
  if (absl::StatusOr<std::string> journal = ReadFileToString(*dir, meta.id + ".journal");
      journal.ok()) {
    if (std::optional<Replayed> r = ReplayJournal(*text, *t, *journal); r.has_value()) {
      count += r->messages;
    }
  }
  return count;
}

std::vector<std::string> ListSessionIds(const std::string& workdir) {
  std::vector<std::string> ids;
  auto dir = OpenSessionsDir(workdir, /*create=*/false);
  if (!dir.ok()) return ids;  // no sessions, or a directory we refuse to read
  // fdopendir takes the descriptor it is given, so it gets a copy.
  const int fd = ::fcntl(dir->fd(), F_DUPFD_CLOEXEC, 0);
  DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return ids;
  }
  while (const struct dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (absl::EndsWith(name, ".json") && !absl::EndsWith(name, ".meta.json")) {
      ids.emplace_back(name.substr(0, name.size() - 5));
    }
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::Status DeleteSessionFiles(const std::string& workdir, const std::string& id) {
  RETURN_IF_ERROR(CheckFileName(id));
  CheckNotInReaction("remove the files of session", id);
  auto dir = OpenSessionsDir(workdir, /*create=*/false);
  if (absl::IsNotFound(dir.status())) return absl::OkStatus();
  if (!dir.ok()) return dir.status();
  for (const char* ext :
       {".json", ".journal", ".meta.json", ".compacted.jsonl", ".checkpoints", ".lock"}) {
    const std::string name = id + ext;
    if (::unlinkat(dir->fd(), name.c_str(), 0) != 0 && errno != ENOENT) {
      return FileErrorStatus(errno, "remove", dir->PathOf(name));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SessionLock> SessionLock::Acquire(const std::string& workdir,
                                                 const std::string& id) {
  ASSIGN_OR_RETURN(DirFd dir, OpenSessionsDir(workdir, /*create=*/true));
  const std::string name = id + ".lock";
  ASSIGN_OR_RETURN(const int fd, dir.OpenFile(name, O_RDWR | O_CREAT));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("session ", id, " is owned by another agentd (lock ", dir.PathOf(name), ")"));
  }
  return SessionLock(fd);
}

SessionLock& SessionLock::operator=(SessionLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

SessionLock::~SessionLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace agent::daemon
