#include "daemon/sandbox/git_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/dir_fd.h"

namespace agent::daemon::sandbox {
namespace {

constexpr char kGit[] = ".git";
constexpr char kHead[] = "HEAD";
constexpr size_t kMaxConfigBytes = 64 << 10;
constexpr int kMaxIncludeDepth = 3;
constexpr size_t kMaxGitFileBytes = 4096;  // a `.git` file or `commondir` is one short line

// The first line of the regular file `path` (not a symlink, not a FIFO), at most 4 KiB.
std::string FirstLine(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  absl::StatusOr<std::string> text = ReadBoundedFile(fd, path, kMaxGitFileBytes);
  if (!text.ok()) return "";
  return std::string(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
}

// `value` (a path from a file in `dir`) made absolute and normal.
std::string Resolved(const std::string& dir, const std::string& value) {
  std::filesystem::path p(value);
  if (p.is_relative()) p = std::filesystem::path(dir) / p;
  return p.lexically_normal().string();
}

// The directory a `.git` file names, or empty (not such a file).
std::string GitFileTarget(const std::string& path) {
  const std::string text = FirstLine(path);
  absl::string_view rest = text;
  if (!absl::ConsumePrefix(&rest, "gitdir:")) return "";
  rest = absl::StripAsciiWhitespace(rest);
  if (rest.empty()) return "";
  return Resolved(std::filesystem::path(path).parent_path().string(), std::string(rest));
}

// The paths git configuration file `config` names that git runs or reads as configuration:
// core.hooksPath (relative: to the work tree `tree`) and include.path / includeIf.*.path
// (relative: to the file's directory; followed kMaxIncludeDepth deep). Read as a regular file
// of at most 64 KiB; `~/` paths are the user's, outside any work tree, and skipped.
void ConfigNamedPaths(const std::string& config, const std::string& tree, int depth,
                      std::vector<std::string>* out) {
  const int fd = ::open(config.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  absl::StatusOr<std::string> text = ReadBoundedFile(fd, config, kMaxConfigBytes);
  if (!text.ok()) return;
  std::string section;
  for (absl::string_view raw : absl::StrSplit(*text, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      const size_t end = line.find_first_of(" \"]");
      section = absl::AsciiStrToLower(line.substr(1, end == absl::string_view::npos ? 0 : end - 1));
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, eq)));
    std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (value.empty() || value.starts_with("~")) continue;
    if (section == "core" && key == "hookspath") {
      out->push_back(Resolved(tree, value));
    } else if ((section == "include" || section == "includeif") && key == "path") {
      const std::string included =
          Resolved(std::filesystem::path(config).parent_path().string(), value);
      out->push_back(included);
      if (depth < kMaxIncludeDepth) ConfigNamedPaths(included, tree, depth + 1, out);
    }
  }
}

// A bound entry cannot be swapped by a command (a mount point), so its inode suffices; a
// symlink's change time is set when it is made, and tells a new one from the old.
FileId Identity(const struct stat& st) {
  FileId id{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), 0};
  if (S_ISLNK(st.st_mode)) {
    id.made_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  }
  return id;
}

std::string RandomSuffix() {
  std::random_device rd;
  return absl::StrCat(absl::Hex(rd(), absl::kZeroPad8));
}

// `entry`'s directory, opened one component at a time below `workdir` without following a
// symlink: a directory swapped for a link since the walk cannot move the rename elsewhere.
absl::StatusOr<DirFd> OpenParent(const std::string& workdir, const std::string& entry) {
  absl::StatusOr<DirFd> dir = DirFd::Open(workdir, /*create=*/false);
  const std::string rel =
      std::filesystem::path(entry.substr(workdir.size() + 1)).parent_path().string();
  for (absl::string_view part : absl::StrSplit(rel, '/', absl::SkipEmpty())) {
    if (!dir.ok()) break;
    dir = dir->OpenSubdir(std::string(part), /*create=*/false);
  }
  return dir;
}

}  // namespace

GitEntries FindGitEntries(const std::string& workdir, size_t max_entries) {
  GitEntries out;
  std::vector<std::pair<std::string, FileId>> found;
  std::vector<std::string> pending = {workdir};
  size_t visited = 0;
  while (!pending.empty() && out.complete) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      // A directory made unreadable may hide a `.git`: the walk is not whole.
      if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) out.complete = false;
      continue;
    }
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      ::close(fd);
      out.complete = false;
      continue;
    }
    int layout = 0;  // HEAD, objects and refs seen: what git takes for a bare repository
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      if (++visited > max_entries) {
        out.complete = false;
        break;
      }
      std::string path = dir + "/" + std::string(name);
      if (name == kHead || name == "objects" || name == "refs") {
        layout |= name == kHead ? 1 : name == "objects" ? 2 : 4;
      }
      if (name == kGit) {
        // Never walked into: git's own files. Known by the file it is, too.
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        found.push_back({std::move(path), Identity(st)});
        continue;
      }
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
      }
      if (type == DT_DIR) pending.push_back(std::move(path));
    }
    if (layout == 7) {
      struct stat st;
      if (::fstatat(::dirfd(d), kHead, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        found.push_back({dir + "/" + kHead, Identity(st)});
      }
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [path, id] : found) {
    out.paths.push_back(std::move(path));
    out.ids.push_back(id);
  }
  return out;
}

std::vector<std::string> UserGitConfigs(const std::string& home) {
  std::vector<std::string> out;
  if (!home.empty()) out.push_back(home + "/.gitconfig");
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg == '/') {
    out.push_back(std::string(xdg) + "/git/config");
  } else if (!home.empty()) {
    out.push_back(home + "/.config/git/config");
  }
  return out;
}

std::vector<std::string> GitControlPaths(const GitEntries& entries, const std::string& workdir,
                                         const std::vector<std::string>& user_configs) {
  std::vector<std::string> out;
  // Config files to read, each with the work tree a relative core.hooksPath is taken from.
  std::vector<std::pair<std::string, std::string>> configs;
  for (const std::string& entry : entries.paths) {
    const std::filesystem::path p(entry);
    const std::string tree = p.parent_path().string();
    if (p.filename() == kHead) {
      // A bare layout: the whole directory, unless it is the work tree itself.
      if (tree != workdir) out.push_back(tree);
      configs.push_back({tree + "/config", tree});
      continue;
    }
    out.push_back(entry);
    for (const std::string& user : user_configs) configs.push_back({user, tree});
    configs.push_back({entry + "/config", tree});
    configs.push_back({entry + "/config.worktree", tree});
    struct stat st;
    if (::lstat(entry.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const std::string target = GitFileTarget(entry);
    if (target.empty()) continue;
    out.push_back(target);
    configs.push_back({target + "/config", tree});
    configs.push_back({target + "/config.worktree", tree});
    // A linked work tree's directory names the repository it shares (`commondir`).
    if (const std::string common = FirstLine(target + "/commondir"); !common.empty()) {
      out.push_back(Resolved(target, common));
      configs.push_back({Resolved(target, common) + "/config", tree});
    }
  }
  for (const auto& [config, tree] : configs) ConfigNamedPaths(config, tree, 0, &out);
  return out;
}

SetAside SetAsideNewGitEntries(const std::string& workdir, const GitEntries& before) {
  SetAside out;
  const GitEntries now = FindGitEntries(workdir);
  out.incomplete = !before.complete || !now.complete;
  for (size_t i = 0; i < now.paths.size(); ++i) {
    const std::string& entry = now.paths[i];
    auto known = std::lower_bound(before.paths.begin(), before.paths.end(), entry);
    if (known != before.paths.end() && *known == entry &&
        before.ids[known - before.paths.begin()] == now.ids[i]) {
      continue;
    }
    const std::string rel = entry.substr(std::min(entry.size(), workdir.size() + 1));
    absl::StatusOr<DirFd> dir = OpenParent(workdir, entry);
    const std::string name = std::filesystem::path(entry).filename().string();  // .git, HEAD
    bool moved = false;
    for (int attempt = 0; dir.ok() && attempt < 8 && !moved; ++attempt) {
      const std::string aside = absl::StrCat(name, ".made-in-sandbox-", RandomSuffix());
      moved = ::renameat2(dir->fd(), name.c_str(), dir->fd(), aside.c_str(), RENAME_NOREPLACE) == 0;
      if (!moved && errno == EINVAL) {  // a file system without RENAME_NOREPLACE
        struct stat st;
        moved = ::fstatat(dir->fd(), aside.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 &&
                ::renameat(dir->fd(), name.c_str(), dir->fd(), aside.c_str()) == 0;
      }
      if (!moved && errno != EEXIST && errno != EINVAL) break;
    }
    (moved ? out.moved : out.failed).push_back(rel);
  }
  return out;
}

std::string SetAsideNote(const SetAside& s) {
  std::string note;
  if (!s.moved.empty()) {
    note = absl::StrCat(
        "[sandbox: the command made ", absl::StrJoin(s.moved, ", "),
        "; git would read it as configuration outside the sandbox, so it was renamed to "
        ".git.made-in-sandbox-<random> beside it. A repository is made outside the sandbox: "
        "call bash with escalate: true and a justification, and a person decides]");
  }
  if (!s.failed.empty()) {
    absl::StrAppend(&note, note.empty() ? "" : "\n",
                    "[sandbox: WARNING: ", absl::StrJoin(s.failed, ", "),
                    " was made by the command and could not be set aside: do not run git "
                    "there before removing it]");
  }
  if (s.incomplete) {
    absl::StrAppend(&note, note.empty() ? "" : "\n",
                    "[sandbox: the project is too large (or holds unreadable directories) for "
                    "its .git entries to be checked whole: a .git there is not guarded]");
  }
  return note;
}

}  // namespace agent::daemon::sandbox
