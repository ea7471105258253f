#include "daemon/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/atomic_file.h"

namespace agent::daemon {

Json SessionMeta::ToJson() const {
  return Json{{"id", id},
              {"workdir", workdir},
              {"title", title},
              {"model", model},
              {"parent_id", parent_id},
              {"created_unix_ms", created_unix_ms},
              {"updated_unix_ms", updated_unix_ms},
              {"message_count", message_count},
              {"turns", turns},
              {"tool_calls", tool_calls},
              {"compactions", compactions},
              {"prompt_tokens", prompt_tokens},
              {"completion_tokens", completion_tokens}};
}

SessionMeta SessionMeta::FromJson(const Json& j) {
  SessionMeta m;
  m.id = GetString(j, "id");
  m.workdir = GetString(j, "workdir");
  m.title = GetString(j, "title");
  m.model = GetString(j, "model");
  m.parent_id = GetString(j, "parent_id");
  m.created_unix_ms = GetInt(j, "created_unix_ms");
  m.updated_unix_ms = GetInt(j, "updated_unix_ms");
  m.message_count = GetInt(j, "message_count");
  m.turns = GetInt(j, "turns");
  m.tool_calls = GetInt(j, "tool_calls");
  m.compactions = GetInt(j, "compactions");
  m.prompt_tokens = GetInt(j, "prompt_tokens");
  m.completion_tokens = GetInt(j, "completion_tokens");
  return m;
}

std::string SessionsDir(const std::string& workdir) { return workdir + "/.agent/sessions"; }
std::string TranscriptPath(const std::string& workdir, const std::string& id) {
  return absl::StrCat(SessionsDir(workdir), "/", id, ".json");
}
std::string MetaPath(const std::string& workdir, const std::string& id) {
  return absl::StrCat(SessionsDir(workdir), "/", id, ".meta.json");
}

absl::Status SaveTranscript(const std::string& workdir, const std::string& id,
                            const Json& messages) {
  // One message per line keeps the file readable in an editor and diffable, at a fraction
  // of the cost of full pretty-printing.
  std::vector<std::string> lines;
  lines.reserve(messages.size());
  for (const Json& m : messages) lines.push_back(DumpJson(m));
  return WriteFileAtomically(TranscriptPath(workdir, id), TranscriptFileText(lines));
}

absl::Status SaveTranscript(const std::string& workdir, const std::string& id,
                            const Transcript& transcript) {
  return WriteFileAtomically(TranscriptPath(workdir, id), transcript.FileText());
}

absl::Status SaveMeta(const SessionMeta& meta) {
  // Meta is rebuilt from the transcript when lost, so it need not survive a power loss.
  return WriteFileAtomically(MetaPath(meta.workdir, meta.id), DumpJson(meta.ToJson(), 2) + "\n",
                             Durability::kUnsynced);
}

absl::Status AppendCompacted(const std::string& workdir, const std::string& id, const Json& removed,
                             const std::string& summary) {
  Json line{
      {"unix_ms", absl::ToUnixMillis(absl::Now())}, {"summary", summary}, {"removed", removed}};
  return AppendToFile(absl::StrCat(SessionsDir(workdir), "/", id, ".compacted.jsonl"),
                      DumpJson(line) + "\n");
}

absl::StatusOr<Transcript> LoadTranscript(const std::string& workdir, const std::string& id) {
  std::string path = TranscriptPath(workdir, id);
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  auto t = Transcript::FromFileText(*text);
  if (!t.ok()) return absl::DataLossError(absl::StrCat(path, ": ", t.status().message()));
  return t;
}

absl::StatusOr<SessionMeta> LoadMeta(const std::string& workdir, const std::string& id) {
  std::string path = MetaPath(workdir, id);
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  auto j = ParseJson(*text);
  if (!j.ok() || !j->is_object()) return absl::DataLossError(path + ": not a JSON object");
  SessionMeta m = SessionMeta::FromJson(*j);
  m.id = id;
  m.workdir = workdir;
  return m;
}

std::vector<std::string> ListSessionIds(const std::string& workdir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(SessionsDir(workdir), ec)) {
    std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, ".json") && !absl::EndsWith(name, ".meta.json")) {
      ids.push_back(name.substr(0, name.size() - 5));
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::Status DeleteSessionFiles(const std::string& workdir, const std::string& id) {
  std::string base = absl::StrCat(SessionsDir(workdir), "/", id);
  for (const char* ext : {".json", ".meta.json", ".compacted.jsonl", ".lock"}) {
    std::string p = base + ext;
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(absl::StrCat("cannot remove ", p));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SessionLock> SessionLock::Acquire(const std::string& workdir,
                                                 const std::string& id) {
  if (auto s = MakeDirs(SessionsDir(workdir)); !s.ok()) return s;
  std::string path = absl::StrCat(SessionsDir(workdir), "/", id, ".lock");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", path));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("session ", id, " is owned by another agentd (lock ", path, ")"));
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
