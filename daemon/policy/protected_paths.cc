#include "daemon/policy/protected_paths.h"

#include <array>
#include <vector>

namespace agent::daemon::policy {
namespace {

// UTF-8 encodings of the code points HFS+ ignores when comparing names (git's is_hfs_dotgit).
constexpr std::array<std::string_view, 16> kIgnorable = {
    "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d",
    "\u202e", "\u206a", "\u206b", "\u206c", "\u206d", "\u206e", "\u206f", "\ufeff"};

// The name a case-insensitive, normalising file system would compare: lower case, ignorable
// code points dropped, trailing dots and spaces dropped.
std::string FoldName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    bool skipped = false;
    for (std::string_view ignorable : kIgnorable) {
      if (name.substr(i, ignorable.size()) == ignorable) {
        i += ignorable.size();
        skipped = true;
        break;
      }
    }
    if (skipped) continue;
    const char c = name[i++];
    out.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c);
  }
  while (!out.empty() && (out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out;
}

bool IsDotGit(std::string_view segment) {
  const std::string folded = FoldName(segment);
  return folded == ".git" || folded == "git~1";
}

bool IsDotAgent(std::string_view segment) {
  const std::string folded = FoldName(segment);
  return folded == ".agent" || folded == "agent~1";
}

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view segment = path.substr(0, slash);
    if (!segment.empty() && segment != ".") out.push_back(segment);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Why writing the path whose segment `git` is a `.git` is refused.
std::string GitReason(const std::vector<std::string_view>& segments, size_t git) {
  if (git + 1 == segments.size()) {
    return "replacing .git would point git at another repository";
  }
  const std::string next = FoldName(segments[git + 1]);
  if (next == "config" && git + 2 == segments.size()) {
    return ".git/config can make git run commands";
  }
  if (next == "hooks") return ".git/hooks are run by git";
  return "files under .git are git's own state";
}

}  // namespace

std::optional<std::string> ProtectedPathReason(std::string_view resolved_relative_path) {
  if (resolved_relative_path.empty() || resolved_relative_path.front() == '/' ||
      resolved_relative_path.find('\0') != std::string_view::npos) {
    return "not a workdir-relative path";
  }
  const std::vector<std::string_view> segments = Segments(resolved_relative_path);
  if (segments.empty()) return "the workdir itself";
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i] == "..") return "not a resolved path (it has `..`)";
    if (IsDotAgent(segments[i])) return ".agent holds the project's permission settings";
    if (IsDotGit(segments[i])) return GitReason(segments, i);
  }
  return std::nullopt;
}

}  // namespace agent::daemon::policy
