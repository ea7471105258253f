// Shell-style globs over '/'-separated relative paths, shared by find_files, search's `glob`
// filter and .gitignore rules. Pure functions; thread-safe.
//
//   *      any run of characters within one path segment
//   ?      one character other than '/'
//   [a-z]  a character class; [!a-z] or [^a-z] negates it
//   **     as a whole segment: zero or more segments ("src/**/*.cc", "**/test")
//   {a,b}  alternatives, nested allowed (expanded by ExpandBraces, not by GlobMatch)
//   \x     the character x itself
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::tools {

// True when the whole of `path` matches `pattern` (braces are taken literally here).
bool GlobMatch(std::string_view pattern, std::string_view path);

// {a,b} alternatives expanded into plain patterns, at most `max_patterns` of them (the rest
// are dropped). Unbalanced braces are kept literally.
std::vector<std::string> ExpandBraces(std::string_view pattern, size_t max_patterns = 64);

// A glob with its braces expanded once. A pattern without '/' matches the file name at any
// depth ("*.cc" finds src/a/b.cc); one with '/' matches the whole relative path.
class PathGlob {
 public:
  explicit PathGlob(std::string_view pattern);
  bool Matches(std::string_view rel_path) const;

 private:
  struct Alternative {
    std::string pattern;
    bool basename_only;  // no '/': matched against the last segment
  };
  std::vector<Alternative> alternatives_;
};

}  // namespace agent::daemon::tools
