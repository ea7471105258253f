// The words of one simple command the way bash will pass them to the program, as far as the
// text shows: for spotting what a command really runs (command_analysis.h), never for running
// it. Pure; thread-compatible; never fails, whatever the input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::policy {

struct ShellWord {
  // Quotes and backslashes removed, $'…' decoded; `$(…)`, `${…}`, `$name` and backticks kept
  // as written (their value is only known when the command runs).
  std::string value;
  bool expands = false;  // holds an unquoted or double-quoted `$…` or backtick
  bool globs = false;    // holds an unquoted `*`, `?`, `[` or `{` the shell may rewrite
  bool unsure = false;   // holds a $'…' escape not decoded here (\u, \c, …)
  bool quoted = false;   // holds a quote or backslash
};

// Splits `part` (a simple command as ParseBashCommand returns it) into words, dropping
// redirections with their targets (`> out`, `2>&1`, `<<EOF`) and stopping at the first unquoted
// newline (what follows it is here-document bodies). An unterminated quote runs to the end.
std::vector<ShellWord> SplitWords(std::string_view part);

// The target words of `part`'s output redirections (`> f`, `>> f`, `&> f`, `2> f`, `>| f`,
// `<> f`; not `>&2`, which duplicates a descriptor), in order, scanned as SplitWords scans.
std::vector<ShellWord> OutputRedirectionTargets(std::string_view part);

// Whether writing the redirection target `target` could land outside the project the command
// runs in: an absolute path (but /dev/null, /dev/stdout, /dev/stderr, /dev/fd/N), `~`, a `..`
// component, or a word whose value is only known at run time (`$HOME/x`, a glob).
bool TargetMayLeaveProject(const ShellWord& target);

}  // namespace agent::daemon::policy
