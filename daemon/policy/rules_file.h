// The text of a settings file (`{"allow": [...], "deny": [...]}`) as rules, with errors that
// point at the place to fix: `path:line:column: problem`. Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "daemon/policy/rules.h"

namespace agent::daemon::policy {

// Missing or null lists are empty, other fields are ignored. InvalidArgument, naming `path`,
// the line and column (1-based) and the problem, for malformed JSON (where the parser stopped),
// a non-object (its first character), a list that is not an array (its key), an entry that is
// not a string or a rule that does not parse (`allow[2]`, at the line where that string is
// written, else at its list's key).
absl::StatusOr<RuleSet> ParseRulesText(std::string_view text, std::string_view path);

}  // namespace agent::daemon::policy
