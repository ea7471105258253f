// Permission rules for gated tools: `tool` or `tool(pattern)`, e.g. `bash(pytest *)`,
// `bash(git status)`, `edit_file(src/**)`, `write_file`. Pure functions; thread-compatible.
//
// Which argument a pattern is matched against: `command` for bash, `path` for every other
// tool. Tool names compare case-insensitively (`Bash(…)` as Claude Code writes it works).
// MCP tools (`mcp__<server>__<tool>`): `mcp__<server>__*` covers every tool of that server, and
// "allow always" proposes the tool's own name.
//
// bash: the command is split into simple commands (bash_split.h: && || ; | |& & newlines,
// subshells and groups, and $(…), backticks, <(…), >(…) as commands of their own, the outer
// command keeping the substitution text). A pattern (command_pattern.h) matches one part:
// equal after whitespace normalisation, `prefix *` / `prefix:*` = the prefix alone or the
// prefix, a space and anything (`git diff *` matches `git diff HEAD`, not `git diff-tree`),
// `*` elsewhere any run of characters, `[*]` a literal star. Redirections and leading
// assignments are part of the text, so `bash(make *)` does not allow `FOO=1 make` (a variable
// such as LD_PRELOAD or PATH changes what runs), while `bash(echo *)` does allow
// `echo x > file`. An output redirection is a write: one to a file that may be outside the
// project (`> /tmp/out`, `>> ~/.bashrc`, `> ../x`, `> $HOME/x`) is allowed only by an exact rule
// (or `bash` without pattern, or a person), never by a pattern such as `bash(git status *)`. A
// command that cannot be split safely is one part only an exact rule allows.
//
// File tools: the pattern is a glob (path_glob.h) over the normalised workdir-relative path
// (`./a//b` -> `a/b`): `*` within a segment, `**` across, `*.md` top level only. A path with
// `..`, an absolute path or an empty one is never allowed by a rule, not even by `edit_file`
// without pattern; it is asked about.
//
// Deny wins: a deny rule without pattern denies every call of its tool; a part (or path)
// matching a deny pattern denies the whole call. Deny matching errs towards matching more:
// leading assignments are also stripped (`bash(rm *)` denies `X=1 rm -rf /`), wildcards still
// apply to a command that could not be split, `..` is resolved, and a deny pattern for a call
// that lacks the argument it is matched against denies that call.
//
// Spelling (command_analysis.h) does not get past a deny rule: each part is also matched with
// quotes and backslashes removed (`\rm`, `'rm'`, `$'\x72m'`), without the command name's
// directory (`/bin/rm`), without redirections, with each wrapper peeled off (`command`, `env`,
// `exec`, `time -p`, `nice -n N`, `nohup`, `timeout D`, `stdbuf`, `sudo`, `xargs`, …), and what a
// command hands to a shell is split and matched too (`eval 'rm x'`, `bash -c 'rm x'`,
// `find -exec rm {} ;`, `su -c`, `env -S`, `trap`, `watch`, `parallel`, `alias x='rm'`), up to 8
// levels deep.
// When a command's text cannot show what runs (a command name from `$…`, a glob or brace
// expansion, a shell reading a script or stdin, `source`, `hash -p`, a command line or string
// that cannot be split, `f() { rm x; }; f` included, or more nesting than is followed), a
// tool-wide allow (`bash`) no longer applies if the tool has deny patterns: the call is asked.
//
// Allow patterns match the part as written, never a peeled or de-quoted form: `bash(git status
// *)` does not allow `env LD_PRELOAD=x git status`, `nice git status`, `./git status` or
// `'git' status` (a wrapper, a path or a variable may change what runs; write a rule for that
// spelling if it is wanted). A wrapper rule (`bash(nice *)`) allows what it names, but no
// prefix or wildcard rule ever allows a command that runs a string or a command it was handed
// (`eval`, `sh -c`, `bash script`, `xargs`, `find -exec`, `source`, `parallel`, also behind a
// wrapper: `nice sh -c …`) or whose name is only known at run time: only an exact rule or a
// person does, and deny rules still see inside it. Substitutions that bash runs from quoted
// text it evaluates as code (`printf -v 'a[$(id)]'`, `test -v`, `[ -v`, `[[`, `let`,
// `declare`/`local`/`export`/… with a subscript, `x='a[$(id)]'` for a later `$((x))`) and the
// substitutions in `(( … ))` are parts of their own: allowed on their own, seen by deny rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::daemon::policy {

struct Rule {
  std::string tool;     // "bash", "edit_file", "write_file", ...
  std::string pattern;  // empty: any call of the tool
};

// Parses `bash(pytest *)`: surrounding whitespace is ignored; the tool name (letters, digits,
// `_-.:`), then optionally a pattern that is everything between the first `(` and the final
// `)`, verbatim (so the exact rule for `echo $(date)` is `bash(echo $(date))`; bash patterns
// are whitespace-normalised when matched). InvalidArgument for unbalanced outer parentheses
// (`bash(x`, `bash)`, `bash(x)y`), an empty tool name or a blank pattern (`bash()`).
absl::StatusOr<Rule> ParseRule(std::string_view text);
// The inverse of ParseRule: `tool` or `tool(pattern)`.
std::string FormatRule(const Rule& rule);
// The form rules are compared in (de-duplication, trust): `Bash( make )` is `bash(make)`.
std::string CanonicalRule(const Rule& rule);

struct RuleSet {
  std::vector<Rule> allow;
  std::vector<Rule> deny;
};

enum class Verdict { kAllow, kDeny, kAsk };

// Decides one call from rules alone. `args` are the call's parsed arguments
// (bash: {"command"}, write_file/edit_file: {"path"} relative to the workdir).
// kDeny when any deny rule matches; kAllow when every part is matched by an allow rule; else
// kAsk (an empty command or one of comments only is asked about unless `bash` is allowed).
Verdict Evaluate(const RuleSet& rules, std::string_view tool, const Json& args);

// The allow rules that let this call run (Evaluate is kAllow), as FormatRule writes them: the
// first that allows it alone, else (a compound command, each part allowed by another rule) the
// ones it cannot do without. Empty when the rules do not allow it.
std::vector<std::string> AllowingRules(const RuleSet& rules, std::string_view tool,
                                       const Json& args);

// The narrow rules "allow always" would record for this call: for bash one rule per simple
// command (hidden substitutions included, see above), exact (its `*` written `[*]`), de-duplicated,
// in order, never a wildcard wider than what was asked (approving `git status && rm -rf tmp`
// proposes `bash(git status)` and `bash(rm -rf tmp)`, never `bash(rm *)`); even read-only commands
// get no prefix rule, since `cat *` would also read any secret. A command that cannot be split
// proposes its whole text. For other tools `tool(<normalised path>)`; nothing for a path the rule
// could never allow
// (`..`, absolute, empty) or for a call without the argument.
std::vector<std::string> ProposeRules(std::string_view tool, const Json& args);

// What a person most likely means by "always" (issue: approvals that learn): like ProposeRules,
// but each simple command that has one gets its prefix rule (command_prefix.h: `git status -s`
// -> `bash(git status *)`); the others keep their exact rule. An MCP tool gets its server's
// rule (`mcp__gh__*`: every tool of that server). Equal to ProposeRules for the other tools.
std::vector<std::string> ProposePrefixRules(std::string_view tool, const Json& args);

// The simple commands of a bash command line, trimmed and whitespace-normalised, in order;
// text inside $(...), backticks and process substitutions counts as commands too. Quotes keep
// their content together. See ParseBashCommand (bash_split.h) for the details.
std::vector<std::string> SplitCompoundCommand(std::string_view command);

// Reads `{"allow": [...], "deny": [...]}` from a settings file (project
// `.agent/settings.json` or user config.json); a missing file is an empty set, as are missing
// or null lists; other fields are ignored. Malformed rules or JSON, a non-object or a list that
// is not an array of strings are InvalidArgument as `path:line:column: problem` (with the
// rule's index, `deny[0]`); see rules_file.h. RuleSource (rule_source.h) caches this per file.
absl::StatusOr<RuleSet> LoadRules(const std::string& path);
// Merges `from` into `into`: each list becomes from's rules followed by into's own, with
// duplicates (same tool, case-insensitively, and pattern) dropped. Order does not change what
// Evaluate decides.
void MergeRules(const RuleSet& from, RuleSet* into);

}  // namespace agent::daemon::policy
