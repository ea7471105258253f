#include "daemon/store.h"

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
#include "common/status_macros.h"
#include "daemon/sessions_dir.h"
#include "daemon/transcript_journal.h"

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

absl::StatusOr<Transcript> LoadTranscript(const std::string& workdir, const std::string& id) {
  ASSIGN_OR_RETURN(std::string text, ReadSessionFile(workdir, id + ".json"));
  // The messages saved after the file was last written whole (a crash, a kill -9).
  if (absl::StatusOr<std::string> journal = ReadSessionFile(workdir, id + ".journal");
      journal.ok()) {
    if (std::optional<Replayed> r = ReplayJournal(text, *journal); r.has_value()) {
      if (Transcript::FromFileText(r->file_text).ok()) text = std::move(r->file_text);
    }
  }
  auto t = Transcript::FromFileText(text);
  if (!t.ok()) {
    return absl::DataLossError(
        absl::StrCat(TranscriptPath(workdir, id), ": ", t.status().message()));
  }
  return t;
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
