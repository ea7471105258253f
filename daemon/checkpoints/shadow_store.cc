#include "daemon/checkpoints/shadow_store.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "common/mutex.h"
#include "common/paths.h"
#include "common/status_macros.h"
#include "daemon/checkpoints/git_runner.h"

namespace agent::daemon::checkpoints {
namespace {

constexpr size_t kMaxUserExcludes = 64 << 10;

// The repository's .git/info/exclude: repository content, so opened component by component
// without following a symlink and without blocking on a FIFO, and read only up to the cap.
// Empty when there is none or it is not a plain file of at most the cap.
std::string ReadUserExcludes(const std::string& root) {
  auto top = DirFd::Open(root, /*create=*/false);
  if (!top.ok()) return "";
  auto git = top->OpenSubdir(".git", false);
  if (!git.ok()) return "";
  auto info = git->OpenSubdir("info", false);
  if (!info.ok()) return "";
  auto fd = info->OpenFile("exclude", O_RDONLY);
  if (!fd.ok()) return "";
  absl::StatusOr<std::string> text =
      ReadBoundedFile(*fd, info->PathOf("exclude"), kMaxUserExcludes);
  return text.ok() ? *std::move(text) : "";
}

constexpr char kRefPrefix[] = "refs/checkpoints/";
constexpr char kPinPrefix[] = "refs/pinned/";  // one per session: its latest before-snapshot

// Never recorded: the session files (transcripts change every message) and git's own.
constexpr char kOwnExcludes[] = "# agentd checkpoints: never recorded\n/.agent/sessions/\n.git\n";

constexpr char kAttributes[] = "* -text -eol -crlf -filter -ident -working-tree-encoding\n";

// Held for every operation on a store: git's own index.lock would fail, not wait.
class StoreLock {
 public:
  explicit StoreLock(const std::string& dir) {
    fd_ = ::open((dir + "/agent.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~StoreLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  int fd_ = -1;
};

bool IsObjectId(absl::string_view s) {
  return s.size() == 40 &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

absl::Status CheckObjectId(const std::string& id) {
  if (IsObjectId(id)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("not an object id: \"", id, "\""));
}

uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Splits git's NUL-terminated output.
std::vector<absl::string_view> SplitZ(absl::string_view text) {
  std::vector<absl::string_view> out = absl::StrSplit(text, '\0');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

// What a snapshot would record: counted from the store's index (`cached`: `ls-files -z -t`,
// each entry "<tag> <path>") and the project's other files not ignored (`others`).
struct Survey {
  std::vector<std::string> tracked_big, untracked_big;  // over limits.max_file_bytes
  std::vector<std::string> tracked_skipped;             // left out before (skip-worktree)
  bool over_count = false, over_bytes = false;
};

Survey TakeSurvey(const std::string& root, absl::string_view cached, absl::string_view others,
                  const SnapshotLimits& limits) {
  Survey s;
  uint64_t bytes = 0;
  size_t files = 0;
  auto count = [&](absl::string_view rel, bool tracked) {
    struct stat st;
    const std::string path = absl::StrCat(root, "/", rel);
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (limits.max_file_bytes > 0 && size > limits.max_file_bytes) {
      (tracked ? s.tracked_big : s.untracked_big).emplace_back(rel);
      return;
    }
    bytes += size;
    ++files;
  };
  for (absl::string_view entry : SplitZ(cached)) {
    if (entry.size() < 3) continue;
    if (entry[0] == 'S') s.tracked_skipped.emplace_back(entry.substr(2));
    count(entry.substr(2), true);
  }
  for (absl::string_view f : SplitZ(others)) count(f, false);
  s.over_count = limits.max_files > 0 && files > limits.max_files;
  s.over_bytes = limits.max_total_bytes > 0 && bytes > limits.max_total_bytes;
  return s;
}

// `path` as an exclude pattern that matches exactly it, from the top ("/a\\*b" for a*b); ""
// when no pattern can (a newline in the name).
std::string LiteralPattern(const std::string& path) {
  if (path.find('\n') != std::string::npos) return "";
  std::string out = "/";
  for (char c : path) {
    if (c == '\\' || c == '*' || c == '?' || c == '[' || c == '!' || c == '#' || c == ' ') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string JoinZ(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) absl::StrAppend(&out, p, std::string(1, '\0'));
  return out;
}

}  // namespace

std::string TreeChange::Kind() const {
  if (old_mode == "000000") return "created";
  if (new_mode == "000000") return "deleted";
  // Only between two regular files: a file that became a symlink to text of the same bytes
  // (or back) needs its content written, not a chmod.
  auto regular = [](const std::string& m) { return m == "100644" || m == "100755"; };
  if (old_blob == new_blob && regular(old_mode) && regular(new_mode)) return "mode";
  return "modified";
}

std::string StoresRoot() { return StateDir() + "/checkpoints"; }

std::string StoreName(const std::string& canonical_root) {
  std::string base = canonical_root.substr(canonical_root.find_last_of('/') + 1);
  base.erase(std::remove_if(base.begin(), base.end(),
                            [](char c) {
                              return !absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-';
                            }),
             base.end());
  if (base.size() > 40) base.resize(40);
  if (base.empty() || base[0] == '.') base.insert(0, "p");
  return absl::StrFormat("%s-%016x", base, Fnv1a(canonical_root));
}

absl::StatusOr<ShadowStore> ShadowStore::Open(const std::string& project_root,
                                              const std::string& stores_root) {
  char resolved[PATH_MAX];
  if (::realpath(project_root.c_str(), resolved) == nullptr) {
    return absl::NotFoundError(absl::StrCat(project_root, ": ", std::strerror(errno)));
  }
  RETURN_IF_ERROR(EnsurePrivateDir(stores_root));
  std::string dir = stores_root + "/" + StoreName(resolved);
  ShadowStore store(resolved, dir);
  struct stat st;
  if (::lstat((dir + "/HEAD").c_str(), &st) != 0) {
    RETURN_IF_ERROR(EnsurePrivateDir(dir));
    StoreLock lock(dir);
    // --template=: no sample hooks, no description; our -c settings hold the configuration.
    RETURN_IF_ERROR(store.Git({"init", "--quiet", "--template="}).status());
  }
  return store;
}

absl::StatusOr<std::string> ShadowStore::Git(std::vector<std::string> args,
                                             std::string input) const {
  return RunGit(GitCall{dir_, root_, std::move(args), std::move(input)});
}

absl::Status ShadowStore::WriteExcludes(const std::string& extra) const {
  std::string rules = kOwnExcludes;
  // The user's own excludes of a plain .git directory, when it is one (not through a link).
  if (std::string user = ReadUserExcludes(root_); !user.empty()) {
    absl::StrAppend(&rules, "# ", root_, "/.git/info/exclude\n", user, "\n");
  }
  rules += extra;
  if (auto old = ReadFileToString(dir_ + "/info/exclude"); !old.ok() || *old != rules) {
    RETURN_IF_ERROR(WriteFileAtomically(dir_ + "/info/exclude", rules, Durability::kUnsynced));
  }
  // Above every .gitattributes of the project: files are stored as they are on disk (no
  // end-of-line conversion, filter, ident or re-encoding), so a restore gives the same bytes.
  if (auto old = ReadFileToString(dir_ + "/info/attributes"); old.ok() && *old == kAttributes) {
    return absl::OkStatus();
  }
  return WriteFileAtomically(dir_ + "/info/attributes", kAttributes, Durability::kUnsynced);
}

absl::StatusOr<std::string> ShadowStore::Snapshot(std::vector<std::string>* left_out) const {
  StoreLock lock(dir_);
  RETURN_IF_ERROR(WriteExcludes());
  // What the project holds now, before anything is read: the limits hold for every snapshot.
  ASSIGN_OR_RETURN(std::string cached, Git({"ls-files", "-z", "-t", "--cached"}));
  ASSIGN_OR_RETURN(std::string others, Git({"ls-files", "-z", "--others", "--exclude-standard"}));
  Survey s = TakeSurvey(root_, cached, others, limits_);
  if (s.over_count) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint skipped: this project has more than ", limits_.max_files,
        " files (config.json \"checkpoints\": {\"max_files\": N}); undo covers no such turn"));
  }
  if (s.over_bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint skipped: this project's files exceed ", limits_.max_total_bytes >> 20,
        " MB (config.json \"checkpoints\": {\"max_project_mb\": N}); undo covers no "
        "such turn"));
  }
  RETURN_IF_ERROR(LeaveOut(s.tracked_big, s.untracked_big, s.tracked_skipped));
  if (left_out != nullptr) {
    *left_out = s.tracked_big;
    left_out->insert(left_out->end(), s.untracked_big.begin(), s.untracked_big.end());
    std::sort(left_out->begin(), left_out->end());
  }
  // --ignore-errors: an unreadable file is left out, not the whole snapshot; git still exits
  // non-zero then, so only a fatal error counts.
  auto added = Git({"add", "--all", "--ignore-errors", "--", "."});
  if (!added.ok() && absl::StrContains(added.status().message(), "fatal:")) {
    return added.status();
  }
  ASSIGN_OR_RETURN(std::string tree, Git({"write-tree"}));
  tree = std::string(absl::StripTrailingAsciiWhitespace(tree));
  RETURN_IF_ERROR(CheckObjectId(tree));
  return tree;
}

absl::StatusOr<std::vector<TreeChange>> ShadowStore::Changes(const std::string& from,
                                                             const std::string& to) const {
  RETURN_IF_ERROR(CheckObjectId(from));
  RETURN_IF_ERROR(CheckObjectId(to));
  StoreLock lock(dir_);
  ASSIGN_OR_RETURN(std::string raw, Git({"diff-tree", "-r", "-z", "--no-renames", from, to}));
  std::vector<absl::string_view> parts = SplitZ(raw);
  std::vector<TreeChange> out;
  // Pairs: ":<old mode> <new mode> <old id> <new id> <status>" then the path.
  for (size_t i = 0; i + 1 < parts.size(); i += 2) {
    std::vector<absl::string_view> f = absl::StrSplit(parts[i], ' ');
    if (f.size() < 5 || f[0].empty() || f[0][0] != ':') {
      return absl::InternalError("unexpected git diff-tree output");
    }
    out.push_back({std::string(parts[i + 1]), std::string(f[0].substr(1)), std::string(f[1]),
                   std::string(f[2]), std::string(f[3])});
  }
  return out;
}

absl::StatusOr<std::string> ShadowStore::Diff(const std::string& from,
                                              const std::string& to) const {
  RETURN_IF_ERROR(CheckObjectId(from));
  RETURN_IF_ERROR(CheckObjectId(to));
  StoreLock lock(dir_);
  return Git({"diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff",
              "--no-textconv", "--binary", from, to});
}

absl::StatusOr<std::vector<std::string>> ShadowStore::Blobs(
    const std::vector<std::string>& ids) const {
  std::string input;
  for (const std::string& id : ids) {
    RETURN_IF_ERROR(CheckObjectId(id));
    absl::StrAppend(&input, id, "\n");
  }
  if (ids.empty()) return std::vector<std::string>{};
  StoreLock lock(dir_);
  ASSIGN_OR_RETURN(std::string raw, Git({"cat-file", "--batch"}, input));
  std::vector<std::string> out;
  size_t pos = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    size_t eol = raw.find('\n', pos);
    if (eol == std::string::npos) return absl::InternalError("short git cat-file output");
    std::vector<absl::string_view> head =
        absl::StrSplit(absl::string_view(raw).substr(pos, eol - pos), ' ');
    uint64_t size = 0;
    if (head.size() != 3 || !absl::SimpleAtoi(head[2], &size) || eol + 1 + size > raw.size()) {
      return absl::NotFoundError(absl::StrCat("object ", ids[k], " is not in the store"));
    }
    out.push_back(raw.substr(eol + 1, size));
    pos = eol + 1 + size + 1;
  }
  return out;
}

bool ShadowStore::HasObject(const std::string& id) const {
  if (!IsObjectId(id)) return false;
  StoreLock lock(dir_);
  return Git({"cat-file", "-e", id}).ok();
}

absl::Status ShadowStore::Keep(const std::string& label, int64_t unix_ms, const std::string& before,
                               const std::string& after) const {
  RETURN_IF_ERROR(CheckObjectId(before));
  RETURN_IF_ERROR(CheckObjectId(after));
  for (char c : label) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') {
      return absl::InvalidArgumentError("bad checkpoint label");
    }
  }
  StoreLock lock(dir_);
  // One tree holding both, so one ref keeps them.
  ASSIGN_OR_RETURN(std::string pair,
                   Git({"mktree"}, absl::StrCat("040000 tree ", before, "\tbefore\n",
                                                "040000 tree ", after, "\tafter\n")));
  pair = std::string(absl::StripTrailingAsciiWhitespace(pair));
  return Git({"update-ref", absl::StrCat(kRefPrefix, unix_ms, "-", label), pair}).status();
}

absl::Status ShadowStore::Pin(const std::string& label, const std::string& tree) const {
  RETURN_IF_ERROR(CheckObjectId(tree));
  for (char c : label) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') {
      return absl::InvalidArgumentError("bad checkpoint label");
    }
  }
  StoreLock lock(dir_);
  return Git({"update-ref", absl::StrCat(kPinPrefix, label), tree}).status();
}

absl::StatusOr<int> ShadowStore::Prune(int64_t now_ms, int64_t max_age_ms, int max_count) const {
  StoreLock lock(dir_);
  ASSIGN_OR_RETURN(std::string refs, Git({"for-each-ref", "--format=%(refname)", kRefPrefix}));
  std::vector<std::pair<int64_t, std::string>> kept;
  for (absl::string_view line : absl::StrSplit(refs, '\n', absl::SkipEmpty())) {
    std::string name(line);
    std::string tail = name.substr(std::min(name.size(), sizeof(kRefPrefix) - 1));
    int64_t ms = 0;
    (void)absl::SimpleAtoi(tail.substr(0, tail.find('-')), &ms);
    kept.emplace_back(ms, name);
  }
  std::sort(kept.rbegin(), kept.rend());  // newest first
  std::string deletes;
  int forgotten = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    const bool too_many = max_count > 0 && i >= static_cast<size_t>(max_count);
    const bool too_old = max_age_ms > 0 && kept[i].first < now_ms - max_age_ms;
    if (!too_many && !too_old) continue;
    absl::StrAppend(&deletes, "delete ", kept[i].second, "\n");
    ++forgotten;
  }
  if (forgotten == 0) return 0;
  RETURN_IF_ERROR(Git({"update-ref", "--stdin"}, deletes).status());
  // The index keeps the latest snapshot's blobs; everything else unnamed goes.
  RETURN_IF_ERROR(Git({"prune", "--expire=now"}).status());
  return forgotten;
}

absl::Status ShadowStore::LeaveOut(const std::vector<std::string>& tracked_big,
                                   const std::vector<std::string>& untracked_big,
                                   const std::vector<std::string>& tracked_skipped) const {
  // A new file over the limit is never added: an exclude rule for exactly it.
  std::string extra;
  for (const std::string& p : untracked_big) {
    std::string pattern = LiteralPattern(p);
    if (pattern.empty()) {
      return absl::FailedPreconditionError(
          "checkpoint skipped: a file over the size limit has a newline in its name");
    }
    if (extra.empty()) extra = "# agentd checkpoints: over the size limit\n";
    absl::StrAppend(&extra, pattern, "\n");
  }
  RETURN_IF_ERROR(WriteExcludes(extra));
  // One recorded before keeps the content recorded (git leaves a skip-worktree entry alone);
  // one back under the limit is recorded again.
  std::set<std::string> big(tracked_big.begin(), tracked_big.end());
  std::vector<std::string> back;
  for (const std::string& p : tracked_skipped) {
    if (big.count(p) == 0) back.push_back(p);
  }
  if (!back.empty()) {
    RETURN_IF_ERROR(
        Git({"update-index", "--no-skip-worktree", "-z", "--stdin"}, JoinZ(back)).status());
  }
  if (!tracked_big.empty()) {
    RETURN_IF_ERROR(
        Git({"update-index", "--skip-worktree", "-z", "--stdin"}, JoinZ(tracked_big)).status());
  }
  return absl::OkStatus();
}

absl::Status ShadowStore::Pack() const {
  StoreLock lock(dir_);
  RETURN_IF_ERROR(Git({"repack", "-a", "-d", "-q"}).status());
  return Git({"prune", "--expire=now"}).status();
}

namespace {
uint64_t g_walk_bytes = 0;  // nftw has no user pointer; guarded by g_walk_mu
int AddBytes(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F) g_walk_bytes += static_cast<uint64_t>(st->st_blocks) * 512;
  return 0;
}
}  // namespace

uint64_t DirectoryBytes(const std::string& dir) {
  static agent::Mutex* mu = new agent::Mutex;
  agent::MutexLock l(mu);
  g_walk_bytes = 0;
  ::nftw(dir.c_str(), AddBytes, 32, FTW_PHYS);
  return g_walk_bytes;
}

}  // namespace agent::daemon::checkpoints
