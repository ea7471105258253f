#include "daemon/policy/path_glob.h"

#include <cstdint>

namespace agent::daemon::policy {
namespace {

// One element of a compiled segment pattern.
struct Token {
  enum Kind : uint8_t { kLiteral, kStar, kAnyChar } kind;
  char c;
};

std::vector<Token> CompileSegment(std::string_view pattern) {
  std::vector<Token> tokens;
  for (size_t i = 0; i < pattern.size();) {
    std::string_view rest = pattern.substr(i);
    if (rest.substr(0, 3) == "[*]" || rest.substr(0, 3) == "[?]") {
      tokens.push_back({Token::kLiteral, rest[1]});
      i += 3;
    } else if (pattern[i] == '*') {
      // Runs of stars (`**` inside a segment) are one star.
      if (tokens.empty() || tokens.back().kind != Token::kStar) tokens.push_back({Token::kStar, 0});
      ++i;
    } else if (pattern[i] == '?') {
      tokens.push_back({Token::kAnyChar, 0});
      ++i;
    } else {
      tokens.push_back({Token::kLiteral, pattern[i]});
      ++i;
    }
  }
  return tokens;
}

// Classic wildcard matching that backtracks only to the last star: O(|pattern| * |text|).
bool MatchSegment(const std::vector<Token>& pattern, std::string_view text) {
  size_t p = 0;
  size_t t = 0;
  size_t star_p = SIZE_MAX;
  size_t star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p].kind == Token::kStar) {
      star_p = p++;
      star_t = t;
    } else if (p < pattern.size() &&
               (pattern[p].kind == Token::kAnyChar || pattern[p].c == text[t])) {
      ++p;
      ++t;
    } else if (star_p != SIZE_MAX) {
      p = star_p + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p].kind == Token::kStar) ++p;
  return p == pattern.size();
}

}  // namespace

std::string NormalizedPath::Joined() const {
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) out.push_back('/');
    out.append(segments[i]);
  }
  return out;
}

NormalizedPath NormalizePath(std::string_view path) {
  NormalizedPath result;
  result.absolute = !path.empty() && path.front() == '/';
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view segment = path.substr(start, slash - start);
    if (!segment.empty() && segment != ".") {
      if (segment == "..") result.has_dotdot = true;
      result.segments.emplace_back(segment);
    }
    start = slash + 1;
  }
  return result;
}

std::vector<std::string> ResolveDotDot(const std::vector<std::string>& segments) {
  std::vector<std::string> out;
  for (const std::string& s : segments) {
    if (s == "..") {
      if (!out.empty()) out.pop_back();
    } else {
      out.push_back(s);
    }
  }
  return out;
}

bool MatchPathGlob(std::string_view pattern, const std::vector<std::string>& path) {
  const NormalizedPath normalized = NormalizePath(pattern);
  if (normalized.has_dotdot || normalized.segments.empty()) return false;
  const size_t np = normalized.segments.size();
  const size_t ns = path.size();
  std::vector<std::vector<Token>> compiled;
  compiled.reserve(np);
  for (const std::string& segment : normalized.segments) {
    compiled.push_back(CompileSegment(segment));
  }

  // can[p][s]: pattern segments p.. match path segments s.. . Filled backwards; a `**` cell is
  // the OR of the next row from s (or s+1 when trailing) on, kept as a running OR, so the
  // whole table costs O(np * ns) segment matches.
  std::vector<std::vector<char>> can(np + 1, std::vector<char>(ns + 1, 0));
  can[np][ns] = 1;
  for (size_t p = np; p-- > 0;) {
    const bool globstar = normalized.segments[p] == "**";
    const bool trailing = p + 1 == np;
    bool later = false;  // OR of can[p + 1][k] for k > s
    for (size_t s = ns + 1; s-- > 0;) {
      bool ok = false;
      if (globstar) {
        // Zero segments (unless trailing) or more.
        ok = later || (!trailing && can[p + 1][s] != 0);
      } else if (s < ns) {
        ok = can[p + 1][s + 1] != 0 && MatchSegment(compiled[p], path[s]);
      }
      can[p][s] = ok ? 1 : 0;
      later = later || can[p + 1][s] != 0;
    }
  }
  return can[0][0] != 0;
}

std::string EscapePathGlob(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '*') {
      out.append("[*]");
    } else if (c == '?') {
      out.append("[?]");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace agent::daemon::policy
