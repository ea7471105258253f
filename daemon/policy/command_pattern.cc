#include "daemon/policy/command_pattern.h"

#include "daemon/policy/bash_split.h"

namespace agent::daemon::policy {
namespace {

constexpr std::string_view kLiteralStar = "[*]";

// Whether `text` matches the wildcard pattern made of `pieces` joined by `*`. Greedy
// leftmost matching of the middle pieces is exact for `*`-only patterns and never backtracks
// more than once per piece, so there is no exponential case.
bool MatchPieces(const std::vector<std::string>& pieces, std::string_view text) {
  if (pieces.empty()) return text.empty();
  if (pieces.size() == 1) return text == pieces[0];
  const std::string& first = pieces.front();
  const std::string& last = pieces.back();
  if (text.size() < first.size() + last.size()) return false;
  if (text.substr(0, first.size()) != first) return false;
  if (text.substr(text.size() - last.size()) != last) return false;
  std::string_view middle = text.substr(first.size(), text.size() - first.size() - last.size());
  for (size_t i = 1; i + 1 < pieces.size(); ++i) {
    const size_t at = middle.find(pieces[i]);
    if (at == std::string_view::npos) return false;
    middle.remove_prefix(at + pieces[i].size());
  }
  return true;
}

}  // namespace

CommandPattern CompileCommandPattern(std::string_view pattern) {
  const std::string normalized = NormalizeCommandWhitespace(pattern);
  CommandPattern compiled;
  compiled.pieces.emplace_back();
  bool last_was_star = false;
  for (size_t i = 0; i < normalized.size();) {
    if (std::string_view(normalized).substr(i, kLiteralStar.size()) == kLiteralStar) {
      compiled.pieces.back().push_back('*');
      i += kLiteralStar.size();
      last_was_star = false;
    } else if (normalized[i] == '*') {
      compiled.pieces.emplace_back();
      ++i;
      last_was_star = true;
    } else {
      compiled.pieces.back().push_back(normalized[i]);
      ++i;
      last_was_star = false;
    }
  }
  // `prefix *` and `prefix:*`: the piece before the final wildcard ends in the separator.
  if (last_was_star && compiled.pieces.size() >= 2) {
    std::string& before = compiled.pieces[compiled.pieces.size() - 2];
    if (!before.empty() && (before.back() == ' ' || before.back() == ':')) {
      before.pop_back();
      compiled.pieces.pop_back();
      compiled.prefix = true;
    }
  }
  return compiled;
}

bool MatchCommandPattern(const CommandPattern& pattern, std::string_view command) {
  if (!pattern.prefix) return MatchPieces(pattern.pieces, command);
  if (MatchPieces(pattern.pieces, command)) return true;
  // Otherwise the prefix, a space, then anything: the pattern's pieces with " " appended to the
  // last one and an empty piece (a wildcard) after it.
  std::vector<std::string> extended = pattern.pieces;
  extended.back().push_back(' ');
  extended.emplace_back();
  return MatchPieces(extended, command);
}

std::string EscapeCommandPattern(std::string_view command) {
  std::string out;
  out.reserve(command.size());
  for (char c : command) {
    if (c == '*') {
      out.append(kLiteralStar);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace agent::daemon::policy
