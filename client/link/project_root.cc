#include "client/link/project_root.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace agent::client {
namespace {

// `dir/name` exists, is ours and is not a symlink; `.agent` must be a directory, `.git` may
// also be the file a linked work tree or a submodule has.
bool OwnMarker(const std::filesystem::path& dir, const char* name, bool dir_only) {
  struct stat st;
  if (::lstat((dir / name).c_str(), &st) != 0) return false;
  if (st.st_uid != ::getuid()) return false;
  return S_ISDIR(st.st_mode) || (!dir_only && S_ISREG(st.st_mode));
}

}  // namespace

ProjectDirs FindProject(const std::string& dir) {
  std::filesystem::path start = std::filesystem::path(dir).lexically_normal();
  if (!start.has_filename() && start != start.root_path()) start = start.parent_path();
  // Bounded by the path's depth: each step removes one component.
  for (std::filesystem::path p = start;; p = p.parent_path()) {
    if (OwnMarker(p, ".agent", true) || OwnMarker(p, ".git", false)) {
      return {p.string(), start.string()};
    }
    if (p == p.root_path() || p.empty()) break;
  }
  return {start.string(), start.string()};
}

ProjectDirs ProjectHere() {
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return {".", "."};
  return FindProject(cwd.string());
}

}  // namespace agent::client
