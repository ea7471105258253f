// Splits a bash command line into the simple commands a permission rule is matched against.
// Pure functions; thread-compatible; never crash and never throw, whatever the input.
//
// What counts as a part (each is matched on its own; a rule never spans two parts):
//   - commands separated by `&&`, `||`, `;`, `|`, `|&`, `&` (background) and newlines;
//   - the commands inside `( … )` subshells and `{ …; }` groups (the braces are dropped);
//   - the contents of `$(…)`, backticks, `<(…)` and `>(…)`, recursively, and the command
//     substitutions inside double quotes, `${…}`, `$((…))` and unquoted here-document bodies.
//     The outer command keeps the substitution text verbatim, so `echo $(rm -rf /)` yields both
//     `echo $(rm -rf /)` and `rm -rf /`: a rule for `echo *` alone cannot let the inner command
//     through, and an exact rule for the outer text does not silently approve whatever runs
//     inside it either. Parts are ordered by where they start in the text.
// An arithmetic command `(( … ))` is one part, its text verbatim, the substitutions inside it
// parts of their own; quotes inside it, or a `)` that makes it ambiguous with nested subshells,
// fail closed (as for `$(( … ))`).
// Kept inside a part's text: redirections (`> out`, `2>&1`), leading assignments (`FOO=1 make`),
// quotes and escapes as written, here-document bodies. Removed from it: comments (`# …` at the
// start of a word), line continuations (backslash-newline), and the leading shell keywords
// `if then elif else while until do time !`, and `-p` after `time` (the rest is the command
// that runs); bare `fi`,
// `done`, `esac` are not parts. Redirections after `)` or `}` become a part of their own
// (`( make ) > log` yields `make` and `> log`). Unquoted whitespace is collapsed to one space.
//
// Anything the splitter does not understand fails closed: an unterminated quote, substitution or
// here-document, an unbalanced `)`, `(` after a word (function definitions, arrays), or nesting
// deeper than kMaxNestingDepth, or a NUL byte makes the whole command one part that only an
// exact rule can match.
// Time and memory are linear in the input, times the nesting depth for backticks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::policy {

inline constexpr int kMaxNestingDepth = 64;

struct BashCommandParts {
  // The simple commands, whitespace-normalised, empty ones dropped, in order of their start.
  std::vector<std::string> parts;
  // True when the command could not be split: `parts` is then the whole command (normalised)
  // and only an exact rule may match it.
  bool exact_only = false;
  // When exact_only: the simple commands recognised before the parse failed. Deny rules are
  // also tried against them (more denial is the safe direction); allow rules never are.
  std::vector<std::string> fragments;
  // When exact_only: why, for logs and tests.
  std::string error;
};

BashCommandParts ParseBashCommand(std::string_view command);

// The commands of the substitutions in `text` read as a double-quoted string (`$(…)`, backticks,
// and those inside `${…}` and `$((…))`), normalised as parts are, in order; nullopt when the
// text cannot be split (unterminated, nested too deeply, a NUL byte). For text bash evaluates
// as code although it was quoted, such as the subscript in `printf -v 'a[$(id)]'`.
std::optional<std::vector<std::string>> SubstitutionsIn(std::string_view text);

// Collapses every run of unquoted spaces, tabs and newlines to one space and trims the ends.
// Text in single or double quotes and backslash-escaped characters are kept as they are.
// Idempotent; applied to both commands and rule patterns so they compare alike.
std::string NormalizeCommandWhitespace(std::string_view text);

// `FOO=1 BAR="a b" make x` -> `make x`: drops leading `NAME=value` words. Used for deny rules
// only, so `bash(rm *)` also denies `X=1 rm -rf /`; allow rules see the full text.
std::string StripLeadingAssignments(std::string_view text);

}  // namespace agent::daemon::policy
