#include "daemon/policy/rule_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "daemon/base/unique_fd.h"
#include "daemon/policy/rules_file.h"
#include "daemon/policy/trusted_rules.h"

namespace agent::daemon::policy {
namespace {

// A settings file larger than this is refused rather than read into memory.
constexpr int64_t kMaxSettingsBytes = 16 << 20;

absl::Status Failed(const std::string& path, const std::string& problem) {
  return absl::FailedPreconditionError(path + ": " + problem);
}

absl::Status Errno(const std::string& path, const char* what, int err) {
  if (err == ELOOP) return Failed(path, "is a symbolic link (not followed for rule files)");
  return Failed(path, std::string(what) + ": " + std::strerror(err));
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::StatusOr<std::string> ReadAll(int fd, const std::string& path) {
  std::string text;
  char buf[1 << 14];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "read", errno);
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > kMaxSettingsBytes) {
      return Failed(path, "larger than 16 MiB");
    }
  }
}

// The directory holding `path`, opened without following a symlink (unless `follow`): its fd,
// -1 when it does not exist, or an error (a symlink is one).
absl::StatusOr<int> OpenParent(const std::string& path, bool follow) {
  const std::string dir = DirName(path);
  const int fd =
      ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd >= 0) return fd;
  const int err = errno;
  struct stat st;
  // With O_DIRECTORY, a symlinked directory fails as ENOTDIR rather than ELOOP.
  if (err == ENOTDIR && !follow && ::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return Errno(dir, "open", ELOOP);
  }
  if (err == ENOENT || err == ENOTDIR) return -1;
  return Errno(dir, "open", err);
}

}  // namespace

FileRuleSource::FileRuleSource(std::vector<std::string> paths,
                               std::vector<std::string> symlinks_followed,
                               std::optional<ProjectTrust> trust)
    : trust_(std::move(trust)) {
  agent::MutexLock l(&mu_);
  for (std::string& path : paths) {
    Entry entry;
    entry.follow_symlinks = std::find(symlinks_followed.begin(), symlinks_followed.end(), path) !=
                            symlinks_followed.end();
    entry.path = std::move(path);
    entries_.push_back(std::move(entry));
  }
  if (trust_.has_value()) {
    Entry store;
    store.path = trust_->store;
    store.follow_symlinks = true;
    store.is_trust_store = true;
    entries_.push_back(std::move(store));
    if (!trust_->personal_store.empty()) {
      Entry personal;
      personal.path = trust_->personal_store;
      personal.follow_symlinks = true;  // the user's own state, like the trust store
      personal.is_personal_store = true;
      entries_.push_back(std::move(personal));
    }
  }
}

int64_t FileRuleSource::reads_for_test() const {
  agent::MutexLock l(&mu_);
  return reads_;
}

absl::StatusOr<RuleSet> FileRuleSource::Rules() {
  agent::MutexLock l(&mu_);
  Update();
  return *merged_;
}

std::vector<std::string> FileRuleSource::UntrustedRules() {
  agent::MutexLock l(&mu_);
  Update();
  return untrusted_;
}

void FileRuleSource::Update() {
  bool changed = !merged_.has_value();
  for (Entry& entry : entries_) changed |= Refresh(entry);
  if (!changed) return;  // every file as it was: no re-merge either
  untrusted_.clear();
  // A store that cannot be read trusts nothing (fail closed), it does not stop every call.
  std::set<std::string> trusted;
  for (const Entry& entry : entries_) {
    if (entry.is_trust_store && entry.rules.ok()) trusted = entry.trusted;
  }
  RuleSet merged;
  for (const Entry& entry : entries_) {
    if (entry.is_trust_store) continue;
    if (entry.is_personal_store) {
      // What a person allowed "always" here: theirs, no trust needed. A store that cannot be
      // read allows nothing more (fail closed), and stops nothing either.
      if (!entry.rules.ok()) continue;
      RuleSet personal;
      for (const std::string& r : entry.trusted) {
        if (absl::StatusOr<Rule> rule = ParseRule(r); rule.ok()) personal.allow.push_back(*rule);
      }
      MergeRules(personal, &merged);
      continue;
    }
    if (!entry.rules.ok()) {
      untrusted_.clear();
      merged_ = entry.rules.status();
      return;
    }
    if (!trust_.has_value() ||
        (entry.path != trust_->settings && entry.path != trust_->local_settings)) {
      MergeRules(*entry.rules, &merged);
      continue;
    }
    RuleSet kept = *entry.rules;
    for (std::string& r : UntrustedAllowRules(kept, trusted)) {
      if (std::find(untrusted_.begin(), untrusted_.end(), r) == untrusted_.end()) {
        untrusted_.push_back(std::move(r));
      }
    }
    std::erase_if(kept.allow, [&](const Rule& r) { return trusted.count(CanonicalRule(r)) == 0; });
    MergeRules(kept, &merged);
  }
  merged_ = std::move(merged);
}

bool FileRuleSource::Refresh(Entry& entry) {
  // A file known to be missing that is still missing is no change either.
  const bool was_missing = entry.loaded && !entry.stamp.exists;
  absl::StatusOr<int> dir_fd = OpenParent(entry.path, entry.follow_symlinks);
  if (!dir_fd.ok() || *dir_fd < 0) {
    // No directory is no file (cached); an error is tried again next time.
    entry.loaded = dir_fd.ok();
    entry.stamp = FileStamp{};
    entry.trusted.clear();
    entry.rules =
        dir_fd.ok() ? absl::StatusOr<RuleSet>(RuleSet{}) : absl::StatusOr<RuleSet>(dir_fd.status());
    return !(was_missing && entry.loaded);
  }
  UniqueFd dir(*dir_fd);
  const std::string name = BaseName(entry.path);
  const int nofollow = entry.follow_symlinks ? 0 : O_NOFOLLOW;
  struct stat st;
  if (::fstatat(dir.get(), name.c_str(), &st, entry.follow_symlinks ? 0 : AT_SYMLINK_NOFOLLOW) !=
      0) {
    const int err = errno;
    entry.loaded = err == ENOENT;
    entry.stamp = FileStamp{};
    entry.trusted.clear();
    entry.rules = err == ENOENT ? absl::StatusOr<RuleSet>(RuleSet{})
                                : absl::StatusOr<RuleSet>(Errno(entry.path, "stat", err));
    return !(was_missing && entry.loaded);
  }
  if (S_ISLNK(st.st_mode)) {
    entry.loaded = false;
    entry.rules = Errno(entry.path, "open", ELOOP);
    return true;
  }
  const FileStamp stamp = StampOf(st);
  // The store's rules hold for one project directory: one re-created at the same path (an
  // unchanged store) is read again, and trusts nothing it did not trust itself.
  const bool store = entry.is_trust_store || entry.is_personal_store;
  const std::string identity = store ? ProjectIdentity(trust_->project) : "";
  if (entry.loaded && entry.stamp == stamp && entry.identity == identity) {
    return false;  // unchanged: the cached result stands
  }
  entry.identity = identity;

  entry.loaded = false;
  entry.trusted.clear();
  if (!S_ISREG(st.st_mode)) {
    entry.rules = Failed(entry.path, "not a regular file");
    return true;
  }
  UniqueFd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | nofollow));
  if (file.get() < 0) {
    entry.rules = Errno(entry.path, "open", errno);
    return true;
  }
  // The file opened must be the one stamped: the project's settings are repository content,
  // and a swap between the stat and the open would cache other text under this stamp.
  struct stat opened;
  if (::fstat(file.get(), &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_dev != st.st_dev ||
      opened.st_ino != st.st_ino) {
    entry.rules = Failed(entry.path, "changed while it was being opened");
    return true;
  }
  ++reads_;
  absl::StatusOr<std::string> text = ReadAll(file.get(), entry.path);
  if (!text.ok()) {
    entry.rules = text.status();
    return true;
  }
  // The stamp of the version checked before reading: a change while reading is seen next time.
  entry.loaded = true;
  entry.stamp = stamp;
  if (store) {
    entry.trusted = TrustedRulesFromText(*text, trust_->project, identity);
    entry.rules = RuleSet{};
    return true;
  }
  absl::StatusOr<RuleSet> rules = ParseRulesText(*text, entry.path);
  entry.rules = rules.ok() ? std::move(rules)
                           : absl::StatusOr<RuleSet>(absl::FailedPreconditionError(
                                 std::string(rules.status().message())));
  return true;
}

}  // namespace agent::daemon::policy
