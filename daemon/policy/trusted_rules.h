// Which allow rules of a project's own .agent/settings.json a person trusted. The file is
// repository content (a clone can ship `"allow": ["bash(*)"]`), so its allow rules take effect
// only once a person trusted that rule for that project: `agent trust`, /trust, or "allow
// always" (a person chose the rule). Its deny rules always apply (they only restrict), and the
// user's own config.json needs no trust.
//
// The record lives outside every repository: $XDG_STATE_HOME/agent/trusted-rules.json,
// `{"projects": {"/abs/project": {"identity": "...", "rules": ["bash(make *)", ...]}}}`, rules
// in CanonicalRule form. Trust is bound to the project directory itself, not only its path:
// `identity` is its device, inode and birth time (ProjectIdentity), so a project removed and
// another cloned at the same path (which may even get the same inode) inherits nothing. An
// entry of an older version (a bare list, no identity) trusts nothing.
// Writers are serialised by a process-wide lock; readers go through FileRuleSource's
// stat-cache (rule_source.h). Thread-safe.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/policy/rules.h"

namespace agent::daemon::policy {

// StateDir()/trusted-rules.json.
std::string TrustedRulesPath();

// What binds trust to the directory `project` is now: "dev:ino:birth-seconds.nanoseconds"
// (statx), or "dev:ino" where the filesystem keeps no birth time; empty when it cannot be
// read.
std::string ProjectIdentity(const std::string& project);

// A trust store's "projects" object (this one's, and the trusted hooks' of hooks/hook_trust.h,
// which has the same shape); a missing or broken store is empty: it trusts nothing.
Json ReadTrustStoreProjects(const std::string& path);
// Writes {"projects": projects} to the store atomically, making its directory.
absl::Status WriteTrustStoreProjects(const std::string& path, const Json& projects);

// The canonical rules trusted for `project` in the store's text, when the entry's identity is
// `identity`. A store that does not parse (or has the wrong shape) trusts nothing.
std::set<std::string> TrustedRulesFromText(std::string_view text, const std::string& project,
                                           const std::string& identity);

// Records `rules` as trusted for `project` as it is now (ProjectIdentity; what was trusted for
// another directory at that path is dropped) in the store at `path` (its directory created 0700,
// the file 0600, written atomically: a symlink at `path` is replaced, never written through).
// Returns the rules as recorded (CanonicalRule form, in order, without repeats).
// InvalidArgument naming the rule, and the store untouched, when one does not parse.
absl::StatusOr<std::vector<std::string>> TrustRules(const std::string& path,
                                                    const std::string& project,
                                                    const std::vector<std::string>& rules);

// Forgets `rules` for `project` (every rule of the project when `rules` is empty). Returns the
// rules forgotten (canonical form).
absl::StatusOr<std::vector<std::string>> RevokeRules(const std::string& path,
                                                     const std::string& project,
                                                     const std::vector<std::string>& rules);

// The allow rules of `rules` whose canonical form is not in `trusted`, as FormatRule writes
// them, in order.
std::vector<std::string> UntrustedAllowRules(const RuleSet& rules,
                                             const std::set<std::string>& trusted);

// What clients are told about untrusted rules: "<settings> allows N rule(s) you have not
// trusted for this project: a, b. They are ignored; `agent trust` (or /trust) trusts them."
// Control characters are made visible (`^[`): the rules are repository content. Empty when
// `untrusted` is.
std::string UntrustedRulesNotice(const std::string& settings_path,
                                 const std::vector<std::string>& untrusted);

}  // namespace agent::daemon::policy
