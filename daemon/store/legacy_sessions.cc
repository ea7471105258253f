#include "daemon/store/legacy_sessions.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/status_macros.h"
#include "daemon/store/sessions_dir.h"

namespace agent::daemon {
namespace {

// The transcript first and the meta and lock last: a migration cut short is finished by the
// next one, which still finds the meta and lock that mark the session as ours.
constexpr const char* kFileOrder[] = {".json", ".compacted.jsonl", ".checkpoints", ".meta.json",
                                      ".lock"};
constexpr size_t kMaxFileBytes = size_t{4} << 30;  // far above any transcript the daemon keeps
constexpr size_t kMaxMetaBytes = size_t{1} << 20;  // ours are a few hundred bytes
constexpr size_t kMaxEntries = 100000;             // a directory that large is not ours

struct State {
  agent::Mutex mu;
  std::set<std::string> noticed ABSL_GUARDED_BY(mu);
  std::map<std::string, std::string> notes ABSL_GUARDED_BY(mu);
};

State& GlobalState() {
  static State* state = new State;  // never destroyed: used until the process exits
  return *state;
}

bool IsSessionId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

// Whether `name` in `dir` is a regular file of ours (not following a symlink).
bool IsOwnFile(const DirFd& dir, const std::string& name) {
  struct stat st;
  return ::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         st.st_uid == ::geteuid();
}

// The daemon wrote this session for this checkout: its lock exists and its meta names the
// project's canonical path (a shipped meta names its author's checkout, not ours).
bool WrittenHereByUs(const DirFd& legacy, const DirFd& dest, const std::string& id,
                     const std::string& workdir) {
  if (!IsOwnFile(legacy, id + ".lock") || !IsOwnFile(legacy, id + ".meta.json")) return false;
  if (!IsOwnFile(legacy, id + ".json") && !IsOwnFile(dest, id + ".json")) return false;
  auto fd = legacy.OpenFile(id + ".meta.json", O_RDONLY);
  if (!fd.ok()) return false;
  auto text = ReadBoundedFile(*fd, legacy.PathOf(id + ".meta.json"), kMaxMetaBytes);
  if (!text.ok()) return false;
  auto meta = ParseJson(*text);
  return meta.ok() && meta->is_object() && GetString(*meta, "workdir") == workdir &&
         GetString(*meta, "id") == id;
}

enum class Moved { kMoved, kCopied, kAbsent, kFailed };

// One file from `from` to `to`: renamed when both are on one file system, else copied and the
// original removed (kCopied when it cannot be: a read-only checkout). Never replaces a file.
Moved MoveFile(const DirFd& from, const DirFd& to, const std::string& name) {
  if (!IsOwnFile(from, name)) {
    struct stat st;
    const bool absent = ::fstatat(from.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0;
    return absent ? Moved::kAbsent : Moved::kFailed;
  }
  if (::renameat2(from.fd(), name.c_str(), to.fd(), name.c_str(), RENAME_NOREPLACE) == 0) {
    return Moved::kMoved;
  }
  if (errno == EEXIST) return Moved::kFailed;
  auto fd = from.OpenFile(name, O_RDONLY);
  if (!fd.ok()) return Moved::kFailed;
  auto content = ReadBoundedFile(*fd, from.PathOf(name), kMaxFileBytes);
  if (!content.ok() || IsOwnFile(to, name)) return Moved::kFailed;
  if (!WriteFileAtomically(to, name, *content, Durability::kSynced).ok()) return Moved::kFailed;
  return ::unlinkat(from.fd(), name.c_str(), 0) == 0 ? Moved::kMoved : Moved::kCopied;
}

// Moves session `id`'s files while holding its legacy lock (an old agentd may own it).
void MoveSession(const DirFd& legacy, const DirFd& dest, const std::string& id,
                 LegacyMigration& m) {
  auto lock = legacy.OpenFile(id + ".lock", O_RDONLY);
  if (!lock.ok()) return;
  if (::flock(*lock, LOCK_EX | LOCK_NB) != 0) {  // its files are counted as left
    ::close(*lock);
    return;
  }
  bool copied = false;
  bool failed = false;
  for (const char* ext : kFileOrder) {
    const Moved r = MoveFile(legacy, dest, id + ext);
    copied = copied || r == Moved::kCopied;
    m.originals_kept += r == Moved::kCopied;
    failed = failed || r == Moved::kFailed;
  }
  ::close(*lock);
  if (failed) return;  // what stayed is counted as left
  if (copied) {
    m.copied += 1;
  } else {
    m.moved += 1;
  }
}

std::string Note(const LegacyMigration& m, const std::string& from, const std::string& to) {
  std::string note;
  if (m.moved + m.copied > 0) {
    note = absl::StrCat("sessions now live outside the repository: ", m.moved + m.copied,
                        " session(s) of this project moved from ", from, " to ", to);
  }
  if (m.copied > 0) {
    absl::StrAppend(&note, " (", m.copied, " copied: the originals could not be removed)");
  }
  if (m.left > 0) {
    absl::StrAppend(&note, note.empty() ? "" : "; ", m.left, " file(s) in ", from,
                    " were left there: agentd did not write them for this checkout (or they "
                    "are in use)");
  }
  return note;
}

// The names in `dir` but "." and "..", at most kMaxEntries.
size_t CountEntries(const DirFd& dir) {
  size_t n = 0;
  for (const std::string& name : NamesWithSuffix(dir, "")) n += name != "." && name != "..";
  return std::min(n, kMaxEntries);
}

// `workdir`'s `.agent` and `.agent/sessions`, when they are directories of their own.
struct LegacyDirs {
  DirFd agent;
  DirFd sessions;
};
std::optional<LegacyDirs> OpenLegacy(const std::string& workdir) {
  auto work = DirFd::Open(workdir, /*create=*/false);
  if (!work.ok()) return std::nullopt;
  auto agent_dir = work->OpenSubdir(".agent", /*create=*/false);
  if (!agent_dir.ok()) return std::nullopt;
  auto legacy = agent_dir->OpenSubdir("sessions", /*create=*/false);
  if (!legacy.ok()) return std::nullopt;  // none, or a link or another's directory
  return LegacyDirs{*std::move(agent_dir), *std::move(legacy)};
}

std::vector<std::string> SessionIds(const DirFd& legacy) {
  std::vector<std::string> ids;
  for (std::string& id : NamesWithSuffix(legacy, ".meta.json")) {
    if (ids.size() == kMaxEntries) break;
    if (IsSessionId(id)) ids.push_back(std::move(id));
  }
  return ids;
}

}  // namespace

void NoticeLegacySessions(const std::string& workdir) {
  State& state = GlobalState();
  {
    agent::MutexLock l(&state.mu);
    if (!state.noticed.insert(workdir).second) return;
  }
  std::optional<LegacyDirs> dirs = OpenLegacy(workdir);
  if (!dirs.has_value()) return;
  const size_t n = SessionIds(dirs->sessions).size();
  if (n == 0) return;
  std::string note = absl::StrCat(
      dirs->sessions.path(), " holds ", n,
      " session(s) of an older agentd. They are not taken on their own (a repository can ship "
      "that directory); `agent trust --sessions` lists them and moves those written for this "
      "checkout to ",
      ProjectSessionsDir(workdir));
  agent::MutexLock l(&state.mu);
  state.notes[workdir] = std::move(note);
}

std::vector<LegacySession> ListLegacySessions(const std::string& workdir) {
  std::vector<LegacySession> out;
  std::optional<LegacyDirs> dirs = OpenLegacy(workdir);
  if (!dirs.has_value()) return out;
  // Where they would go: opened, not made, so listing writes nothing.
  auto dest = OpenProjectSessionsDir(workdir, /*create=*/false);
  for (const std::string& id : SessionIds(dirs->sessions)) {
    const DirFd& where = dest.ok() ? *dest : dirs->sessions;
    if (!WrittenHereByUs(dirs->sessions, where, id, workdir)) continue;
    LegacySession s{id, ""};
    if (auto fd = dirs->sessions.OpenFile(id + ".meta.json", O_RDONLY); fd.ok()) {
      auto text = ReadBoundedFile(*fd, dirs->sessions.PathOf(id + ".meta.json"), kMaxMetaBytes);
      if (auto meta = text.ok() ? ParseJson(*text) : absl::StatusOr<Json>(text.status());
          meta.ok() && meta->is_object()) {
        s.title = GetString(*meta, "title");
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

LegacyMigration ImportLegacySessions(const std::string& workdir,
                                     const std::vector<std::string>& ids) {
  // One import at a time in the process, apart from the notes' lock: files are copied here.
  static agent::Mutex import_mu;
  agent::MutexLock l(&import_mu);
  LegacyMigration m;
  std::optional<LegacyDirs> dirs = OpenLegacy(workdir);
  if (!dirs.has_value()) return m;
  auto dest = OpenProjectSessionsDir(workdir, /*create=*/true);
  if (!dest.ok()) {
    m.note = absl::StrCat("cannot import: ", dest.status().message());
    return m;
  }
  for (const std::string& id : SessionIds(dirs->sessions)) {
    if (std::find(ids.begin(), ids.end(), id) != ids.end() &&
        WrittenHereByUs(dirs->sessions, *dest, id, workdir)) {
      MoveSession(dirs->sessions, *dest, id, m);
    }
  }
  m.left = static_cast<int>(CountEntries(dirs->sessions));
  // Empty now: the directory goes too (a shipped `.agent/` keeps the rest of its files).
  if (m.left == 0) (void)::unlinkat(dirs->agent.fd(), "sessions", AT_REMOVEDIR);
  m.left -= std::min(m.left, m.originals_kept);  // said as "copied"
  m.note = Note(m, dirs->sessions.path(), ProjectSessionsDir(workdir));
  State& state = GlobalState();
  agent::MutexLock notes(&state.mu);
  state.notes.erase(workdir);  // the notice is out of date
  return m;
}

std::string TakeMigrationNote(const std::string& workdir) {
  NoticeLegacySessions(workdir);
  State& state = GlobalState();
  agent::MutexLock l(&state.mu);
  auto it = state.notes.find(workdir);
  if (it == state.notes.end()) return "";
  std::string note = std::move(it->second);
  state.notes.erase(it);
  return note;
}

}  // namespace agent::daemon
