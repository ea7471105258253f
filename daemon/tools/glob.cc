#include "daemon/tools/glob.h"

namespace agent::daemon::tools {
namespace {

std::vector<std::string_view> SplitSegments(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t slash = s.find('/', pos);
    if (slash == std::string_view::npos) slash = s.size();
    if (slash > pos) out.push_back(s.substr(pos, slash - pos));  // "a//b" is "a/b"
    pos = slash + 1;
  }
  return out;
}

// Matches a [...] class at pattern[*pi] against c; advances *pi past it. A '[' without its
// ']' is an ordinary character.
bool MatchClass(std::string_view pattern, size_t* pi, char c, bool* ok) {
  size_t i = *pi + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < pattern.size() && (first || pattern[i] != ']')) {
    first = false;
    char lo = pattern[i];
    if (lo == '\\' && i + 1 < pattern.size()) lo = pattern[++i];
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = pattern[i + 2];
      if (hi == '\\' && i + 3 < pattern.size()) {
        hi = pattern[i + 3];
        ++i;
      }
      i += 2;
    }
    if (lo <= c && c <= hi) matched = true;
    ++i;
  }
  if (i >= pattern.size()) {
    *ok = false;  // no closing bracket
    return false;
  }
  *ok = true;
  *pi = i + 1;
  return matched != negate;
}

// Wildcard matching, greedy with backtracking to the last star, which is linear for a single
// star and correct for several. `is_star(pi)`: pattern item pi is a star (a run counts as
// one); `step(pi, si)`: how many pattern items match subject item si from pi, 0 for none.
template <typename IsStar, typename Step>
bool GreedyMatch(size_t pattern_size, size_t subject_size, IsStar is_star, Step step) {
  size_t pi = 0, si = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (si < subject_size) {
    if (pi < pattern_size && is_star(pi)) {
      while (pi < pattern_size && is_star(pi)) ++pi;
      star_p = pi;
      star_s = si;
      continue;
    }
    if (pi < pattern_size) {
      if (const size_t n = step(pi, si); n > 0) {
        pi += n;
        ++si;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    si = ++star_s;
  }
  while (pi < pattern_size && is_star(pi)) ++pi;
  return pi == pattern_size;
}

// One segment: no '/' on either side.
bool MatchSegment(std::string_view p, std::string_view s) {
  return GreedyMatch(
      p.size(), s.size(), [&](size_t pi) { return p[pi] == '*'; },
      [&](size_t pi, size_t si) -> size_t {
        const char pc = p[pi];
        if (pc == '?') return 1;
        if (pc == '[') {
          size_t next = pi;
          bool ok = false;
          const bool m = MatchClass(p, &next, s[si], &ok);
          if (ok) return m ? next - pi : 0;
          return s[si] == '[' ? 1 : 0;  // not a class: a literal '['
        }
        if (pc == '\\' && pi + 1 < p.size()) return p[pi + 1] == s[si] ? 2 : 0;
        return pc == s[si] ? 1 : 0;
      });
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view path) {
  std::vector<std::string_view> ps = SplitSegments(pattern);
  std::vector<std::string_view> ss = SplitSegments(path);
  // The same scheme one level up: "**" is the star, segments are the characters.
  return GreedyMatch(
      ps.size(), ss.size(), [&](size_t pi) { return ps[pi] == "**"; },
      [&](size_t pi, size_t si) -> size_t { return MatchSegment(ps[pi], ss[si]) ? 1 : 0; });
}

std::vector<std::string> ExpandBraces(std::string_view pattern, size_t max_patterns) {
  // Find the first top-level {...} that holds a comma.
  size_t open = std::string_view::npos;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
      continue;
    }
    if (pattern[i] != '{') continue;
    int depth = 0;
    bool has_comma = false;
    size_t close = std::string_view::npos;
    for (size_t j = i; j < pattern.size(); ++j) {
      if (pattern[j] == '\\') {
        ++j;
        continue;
      }
      if (pattern[j] == '{') ++depth;
      if (pattern[j] == '}' && --depth == 0) {
        close = j;
        break;
      }
      if (pattern[j] == ',' && depth == 1) has_comma = true;
    }
    if (close != std::string_view::npos && has_comma) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return {std::string(pattern)};

  std::vector<std::string_view> alternatives;
  size_t start = open + 1;
  int depth = 0;
  size_t close = open;
  for (size_t j = open + 1; j < pattern.size(); ++j) {
    char c = pattern[j];
    if (c == '\\') {
      ++j;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') {
      if (depth == 0) {
        alternatives.push_back(pattern.substr(start, j - start));
        close = j;
        break;
      }
      --depth;
    }
    if (c == ',' && depth == 0) {
      alternatives.push_back(pattern.substr(start, j - start));
      start = j + 1;
    }
  }
  std::string_view prefix = pattern.substr(0, open);
  std::string_view suffix = pattern.substr(close + 1);
  std::vector<std::string> out;
  for (std::string_view alt : alternatives) {
    std::string combined;
    combined.append(prefix).append(alt).append(suffix);
    for (std::string& p : ExpandBraces(combined, max_patterns)) {
      if (out.size() >= max_patterns) return out;
      out.push_back(std::move(p));
    }
  }
  return out;
}

PathGlob::PathGlob(std::string_view pattern) {
  while (pattern.size() > 2 && pattern.substr(0, 2) == "./") pattern.remove_prefix(2);
  for (std::string& p : ExpandBraces(pattern)) {
    bool basename_only = p.find('/') == std::string::npos;
    alternatives_.push_back({std::move(p), basename_only});
  }
}

bool PathGlob::Matches(std::string_view rel_path) const {
  std::string_view base = rel_path;
  size_t slash = base.rfind('/');
  if (slash != std::string_view::npos) base.remove_prefix(slash + 1);
  for (const Alternative& alt : alternatives_) {
    if (GlobMatch(alt.pattern, alt.basename_only ? base : rel_path)) return true;
  }
  return false;
}

}  // namespace agent::daemon::tools
