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

// One segment: no '/' on either side. Greedy with backtracking to the last '*', which is
// linear for a single star and correct for several.
bool MatchSegment(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size()) {
      char pc = p[pi];
      if (pc == '*') {
        while (pi < p.size() && p[pi] == '*') ++pi;
        star_p = pi;
        star_s = si;
        continue;
      }
      if (pc == '?') {
        ++pi;
        ++si;
        continue;
      }
      if (pc == '[') {
        size_t next = pi;
        bool ok = false;
        bool m = MatchClass(p, &next, s[si], &ok);
        if (ok) {
          if (m) {
            pi = next;
            ++si;
            continue;
          }
        } else if (s[si] == '[') {
          ++pi;
          ++si;
          continue;
        }
      } else {
        if (pc == '\\' && pi + 1 < p.size()) {
          if (p[pi + 1] == s[si]) {
            pi += 2;
            ++si;
            continue;
          }
        } else if (pc == s[si]) {
          ++pi;
          ++si;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view path) {
  std::vector<std::string_view> ps = SplitSegments(pattern);
  std::vector<std::string_view> ss = SplitSegments(path);
  // The same greedy scheme one level up: "**" is the star, segments are the characters.
  size_t pi = 0, si = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (si < ss.size()) {
    if (pi < ps.size() && ps[pi] == "**") {
      while (pi < ps.size() && ps[pi] == "**") ++pi;
      star_p = pi;
      star_s = si;
      continue;
    }
    if (pi < ps.size() && MatchSegment(ps[pi], ss[si])) {
      ++pi;
      ++si;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    si = ++star_s;
  }
  while (pi < ps.size() && ps[pi] == "**") ++pi;
  return pi == ps.size();
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
