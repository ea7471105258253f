#include "daemon/tools/gitignore.h"

#include "daemon/tools/glob.h"

namespace agent::daemon::tools {

GitignoreRules GitignoreRules::Parse(std::string_view text) {
  GitignoreRules out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Trailing spaces are dropped unless escaped with a backslash.
    while (!line.empty() && line.back() == ' ' &&
           !(line.size() >= 2 && line[line.size() - 2] == '\\')) {
      line.remove_suffix(1);
    }
    if (line.empty() || line[0] == '#') continue;
    Rule rule;
    if (line[0] == '!') {
      rule.negated = true;
      line.remove_prefix(1);
    } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '!' || line[1] == '#')) {
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.dir_only = true;
      while (!line.empty() && line.back() == '/') line.remove_suffix(1);
    }
    if (!line.empty() && line[0] == '/') {
      rule.anchored = true;
      while (!line.empty() && line[0] == '/') line.remove_prefix(1);
    }
    if (line.empty()) continue;
    if (line.find('/') != std::string_view::npos) rule.anchored = true;
    rule.pattern = std::string(line);
    out.rules_.push_back(std::move(rule));
  }
  return out;
}

GitignoreRules::Verdict GitignoreRules::Check(std::string_view rel_path, bool is_dir) const {
  std::string_view name = rel_path;
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->dir_only && !is_dir) continue;
    if (GlobMatch(it->pattern, it->anchored ? rel_path : name)) {
      return it->negated ? Verdict::kIncluded : Verdict::kIgnored;
    }
  }
  return Verdict::kNoMatch;
}

IgnoreStack IgnoreStack::With(std::string dir_rel, GitignoreRules rules) const {
  IgnoreStack out = *this;
  if (!rules.empty()) {
    out.levels_.push_back(
        std::make_shared<const Level>(Level{std::move(dir_rel), std::move(rules)}));
  }
  return out;
}

bool IgnoreStack::IsIgnored(std::string_view rel_path, bool is_dir) const {
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
    const Level& level = **it;
    std::string_view local = rel_path;
    if (!level.dir_rel.empty()) {
      if (local.size() <= level.dir_rel.size() ||
          local.substr(0, level.dir_rel.size()) != level.dir_rel ||
          local[level.dir_rel.size()] != '/') {
        continue;  // not below this .gitignore
      }
      local.remove_prefix(level.dir_rel.size() + 1);
    }
    GitignoreRules::Verdict v = level.rules.Check(local, is_dir);
    if (v != GitignoreRules::Verdict::kNoMatch) return v == GitignoreRules::Verdict::kIgnored;
  }
  return false;
}

}  // namespace agent::daemon::tools
