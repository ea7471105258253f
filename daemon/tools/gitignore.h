// The rules of .gitignore files, a reasonable subset of git's: blank lines and `#` comments,
// `!` negation, trailing `/` for directories only, a leading or inner `/` anchoring the
// pattern to the file's directory, `*`, `?`, `[...]` and `**`. Not supported: git's global
// excludes and .git/info/exclude, and trailing-space escapes beyond `\ `. Immutable after
// Parse; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::tools {

class GitignoreRules {
 public:
  enum class Verdict { kNoMatch, kIgnored, kIncluded };

  static GitignoreRules Parse(std::string_view text);

  // `rel_path`: relative to the directory holding the .gitignore. The last matching rule
  // decides, as in git.
  Verdict Check(std::string_view rel_path, bool is_dir) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    std::string pattern;
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the whole relative path, not the name
  };
  std::vector<Rule> rules_;
};

// The .gitignore files in effect for one directory of a walk, outermost first. Deeper files
// take precedence, as in git. Cheap to copy: levels are shared.
class IgnoreStack {
 public:
  // Adds the rules of the .gitignore in `dir_rel` ("" for the walk's root).
  IgnoreStack With(std::string dir_rel, GitignoreRules rules) const;
  // `rel_path` relative to the same root as the dir_rel given to With.
  bool IsIgnored(std::string_view rel_path, bool is_dir) const;

 private:
  struct Level {
    std::string dir_rel;
    GitignoreRules rules;
  };
  std::vector<std::shared_ptr<const Level>> levels_;
};

}  // namespace agent::daemon::tools
