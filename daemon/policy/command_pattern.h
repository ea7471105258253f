// Bash rule patterns (the text inside `bash(…)`), compiled and matched against one simple
// command as produced by ParseBashCommand. Pure; thread-compatible.
//
// Syntax, after whitespace normalisation (NormalizeCommandWhitespace):
//   - `*` matches any run of characters, spaces and quotes included, within the one command;
//   - a trailing ` *` or `:*` (Claude Code's spelling) makes a prefix rule: `git diff *` matches
//     `git diff` and `git diff HEAD`, never `git diff-tree`;
//   - `[*]` is a literal `*` (the glob way of escaping it), so an exact rule for `rm -rf *` is
//     written `rm -rf [*]`, which EscapeCommandPattern produces; everything else is literal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::policy {

struct CommandPattern {
  // Literal runs between wildcards: `a*b` -> {"a", "b"}; no wildcard -> one piece.
  std::vector<std::string> pieces;
  // Trailing ` *` / `:*`: `pieces` then holds the prefix alone (`git diff *` -> {"git diff"}).
  bool prefix = false;

  // No wildcard at all: matches one text only.
  bool exact() const { return !prefix && pieces.size() == 1; }
};

CommandPattern CompileCommandPattern(std::string_view pattern);

// Whether `command` (one normalised simple command) matches. O(|pattern| * |command|).
bool MatchCommandPattern(const CommandPattern& pattern, std::string_view command);

// The pattern that matches exactly `command` and nothing else (`*` -> `[*]`).
std::string EscapeCommandPattern(std::string_view command);

}  // namespace agent::daemon::policy
