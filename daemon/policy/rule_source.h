// Where a session's permission rules come from: a cache of the merged rules of the user's
// config.json and the project's .agent/settings.json (its allow rules only as far as a person
// trusted them: trusted_rules.h), re-read only when a file changed, so a gated call costs a few
// stat() calls instead of reading and parsing the files.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/file_stamp.h"
#include "common/mutex.h"
#include "daemon/policy/rules.h"

namespace agent::daemon::policy {

// Thread-safe. Caches the merged rules of a list of files; re-reads a file only when its
// (dev, inode, size, mtime_ns, ctime_ns) changed. A file that does not parse makes Rules() fail
// closed.
class RuleSource {
 public:
  virtual ~RuleSource() = default;
  // The merged rules (MergeRules, the later file's rules first; order does not change a
  // verdict), or an error naming the file, the line (and column) and the problem
  // (FailedPrecondition). A missing file contributes nothing.
  virtual absl::StatusOr<RuleSet> Rules() = 0;
  // The project's allow rules Rules() leaves out because no person trusted them for this
  // project (FormatRule form, in the file's order); empty when Rules() fails.
  virtual std::vector<std::string> UntrustedRules() { return {}; }
};

// Whose allow rules need a person's trust, and where that trust is recorded.
struct ProjectTrust {
  std::string settings;  // the project's settings file: one of FileRuleSource's `paths`
  std::string store;     // the trust store (TrustedRulesPath())
  std::string project;   // the project's key in the store (its canonical directory)
  // The person's own settings.local.json, when among `paths`: also repository content (a clone
  // can force-add one), so its allow rules count only as trusted too.
  std::string local_settings = "";
  // The person's own rules store (PersonalRulesPath(), personal_rules.h): its rules for this
  // project directory, as it is now, count as allow rules without trust. Empty: none.
  std::string personal_store = "";
};

class FileRuleSource : public RuleSource {
 public:
  // `paths` in order (user config first, then project settings). The final component of a path
  // and the directory holding it are never followed as symlinks (the project's `.agent/` is
  // repository content: a symlink there could point the rules at a file the agent may write);
  // a symlink is an error naming the path. Paths listed in `symlinks_followed` (the user's own
  // config, which dotfile managers link) are opened normally.
  // With `trust`, the allow rules of `trust->settings` count only when the store (read through
  // the same stat-cache, symlinks followed: it is the user's own state) lists them for
  // `trust->project`; its deny rules always count. A store that does not parse trusts nothing.
  explicit FileRuleSource(std::vector<std::string> paths,
                          std::vector<std::string> symlinks_followed = {},
                          std::optional<ProjectTrust> trust = std::nullopt);

  absl::StatusOr<RuleSet> Rules() override;
  std::vector<std::string> UntrustedRules() override;

  // How many times a file was read and parsed since construction (for tests of the cache).
  int64_t reads_for_test() const;

 private:
  struct Entry {
    std::string path;
    bool follow_symlinks = false;
    bool is_trust_store = false;     // parsed into `trusted`, not `rules`
    bool is_personal_store = false;  // parsed as a trust store; its rules are allow rules
    bool loaded = false;             // `stamp` and `rules` describe a version read before
    FileStamp stamp;                 // `exists` false for a missing file
    absl::StatusOr<RuleSet> rules = RuleSet{};
    std::set<std::string> trusted;  // the trust store's rules for the project
    std::string identity;           // the project's ProjectIdentity when `trusted` was read
  };

  // Brings `entry` up to date with the file on disk; false when nothing changed.
  bool Refresh(Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Refreshes every entry and rebuilds merged_ and untrusted_ when one changed.
  void Update() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable agent::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  int64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
  // The merge of the entries' rules (or the first error), rebuilt only when one changed.
  std::optional<absl::StatusOr<RuleSet>> merged_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> untrusted_ ABSL_GUARDED_BY(mu_);
  const std::optional<ProjectTrust> trust_;
};

// For tests: always the given rules, or always the given error.
class FixedRuleSource : public RuleSource {
 public:
  explicit FixedRuleSource(RuleSet rules) : rules_(std::move(rules)) {}
  explicit FixedRuleSource(absl::Status error) : rules_(std::move(error)) {}

  absl::StatusOr<RuleSet> Rules() override { return rules_; }

 private:
  const absl::StatusOr<RuleSet> rules_;
};

}  // namespace agent::daemon::policy
