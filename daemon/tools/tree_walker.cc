#include "daemon/tools/tree_walker.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/gitignore.h"
#include "daemon/tools/path_resolver.h"

namespace agent::daemon::tools {
namespace {

// A .gitignore larger than this is not a real one; skip it.
constexpr uint64_t kMaxGitignoreBytes = 1 << 20;

struct Frame {
  std::string abs;
  std::string rel;  // "" for the workdir itself
  IgnoreStack ignores;
};

std::string JoinRel(const std::string& dir_rel, std::string_view name) {
  if (dir_rel.empty()) return std::string(name);
  std::string out = dir_rel;
  out.push_back('/');
  out.append(name);
  return out;
}

IgnoreStack LoadGitignore(const IgnoreStack& base, const std::string& dir_abs,
                          const std::string& dir_rel) {
  absl::StatusOr<std::string> text =
      ReadRegularFile(dir_abs + "/.gitignore", kMaxGitignoreBytes, ".gitignore");
  if (!text.ok()) return base;
  return base.With(dir_rel, GitignoreRules::Parse(*text));
}

struct DirEntry {
  std::string name;
  unsigned char type;
};

bool ReadDirSorted(const std::string& abs, std::vector<DirEntry>* out) {
  DIR* dir = ::opendir(abs.c_str());
  if (dir == nullptr) return false;
  while (dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out->push_back({e->d_name, e->d_type});
  }
  ::closedir(dir);
  std::sort(out->begin(), out->end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return true;
}

}  // namespace

bool IsSkippedDirName(std::string_view name) { return name == ".git" || name == ".agent"; }

absl::Status WalkFiles(const std::string& workdir, const std::string& start_abs,
                       const WalkOptions& options,
                       const std::function<bool(const WalkEntry&)>& visit, WalkStats* stats) {
  struct stat st;
  if (::stat(start_abs.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(RelativeToWorkdir(workdir, start_abs), " does not exist"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(RelativeToWorkdir(workdir, start_abs), " is not a directory"));
  }
  std::string start_rel = RelativeToWorkdir(workdir, start_abs);
  if (start_rel == ".") start_rel.clear();

  // The .gitignore files above the start still apply to it.
  IgnoreStack ignores;
  if (options.honour_gitignore) {
    std::string dir_abs = workdir;
    std::string dir_rel;
    ignores = LoadGitignore(ignores, dir_abs, dir_rel);
    size_t pos = 0;
    while (pos < start_rel.size()) {
      size_t slash = start_rel.find('/', pos);
      if (slash == std::string::npos) slash = start_rel.size();
      dir_rel = start_rel.substr(0, slash);
      dir_abs = workdir + "/" + dir_rel;
      ignores = LoadGitignore(ignores, dir_abs, dir_rel);
      pos = slash + 1;
    }
  }

  WalkStats local;
  if (stats == nullptr) stats = &local;
  std::vector<Frame> stack;
  stack.push_back({start_abs, start_rel, ignores});
  while (!stack.empty()) {
    Frame frame = std::move(stack.back());
    stack.pop_back();
    if (options.honour_gitignore && frame.rel != start_rel) {
      frame.ignores = LoadGitignore(frame.ignores, frame.abs, frame.rel);
    }
    std::vector<DirEntry> entries;
    if (!ReadDirSorted(frame.abs, &entries)) continue;
    std::vector<Frame> subdirs;
    for (const DirEntry& e : entries) {
      if (++stats->entries_seen > options.max_entries) {
        stats->truncated = true;
        return absl::OkStatus();
      }
      std::string abs = frame.abs + "/" + e.name;
      bool is_dir = e.type == DT_DIR;
      bool is_file = e.type == DT_REG;
      bool is_link = e.type == DT_LNK;
      if (e.type == DT_UNKNOWN) {
        struct stat est;
        if (::lstat(abs.c_str(), &est) != 0) continue;
        is_dir = S_ISDIR(est.st_mode);
        is_file = S_ISREG(est.st_mode);
        is_link = S_ISLNK(est.st_mode);
      }
      if (is_link) {
        struct stat target;
        // Only links to regular files count; links to directories are not followed.
        if (::stat(abs.c_str(), &target) != 0 || !S_ISREG(target.st_mode)) continue;
        is_file = true;
      }
      if (is_dir && IsSkippedDirName(e.name)) continue;
      if (!is_dir && !is_file) continue;  // sockets, fifos, devices
      std::string rel = JoinRel(frame.rel, e.name);
      if (options.honour_gitignore && frame.ignores.IsIgnored(rel, is_dir)) continue;
      if (is_dir) {
        subdirs.push_back({std::move(abs), std::move(rel), frame.ignores});
        continue;
      }
      if (!visit(WalkEntry{std::move(rel), std::move(abs), is_link})) return absl::OkStatus();
    }
    // Reverse, so the first subdirectory is walked first.
    for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
  }
  return absl::OkStatus();
}

}  // namespace agent::daemon::tools
