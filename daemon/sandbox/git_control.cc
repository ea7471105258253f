#include "daemon/sandbox/git_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace agent::daemon::sandbox {
namespace {

constexpr char kGit[] = ".git";

// The directory a `.git` file names, or empty (not such a file).
std::string GitFileTarget(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, "gitdir:")) return "";
  rest = absl::StripAsciiWhitespace(rest);
  if (rest.empty()) return "";
  std::filesystem::path target(std::string(rest.data(), rest.size()));
  if (target.is_relative()) target = std::filesystem::path(path).parent_path() / target;
  return target.lexically_normal().string();
}

}  // namespace

GitEntries FindGitEntries(const std::string& workdir, size_t max_entries) {
  GitEntries out;
  std::vector<std::string> pending = {workdir};
  size_t visited = 0;
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      ::close(fd);
      continue;
    }
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      if (++visited > max_entries) {
        out.complete = false;
        break;
      }
      std::string path = dir + "/" + std::string(name);
      if (name == kGit) {
        out.paths.push_back(std::move(path));  // never walked into: git's own files
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
    ::closedir(d);
    if (!out.complete) break;
  }
  std::sort(out.paths.begin(), out.paths.end());
  return out;
}

std::vector<std::string> GitControlPaths(const GitEntries& entries) {
  std::vector<std::string> out;
  for (const std::string& entry : entries.paths) {
    out.push_back(entry);
    struct stat st;
    if (::lstat(entry.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const std::string target = GitFileTarget(entry);
    if (target.empty()) continue;
    out.push_back(target);
    // A linked work tree's directory names the repository it shares (`commondir`).
    std::ifstream in(target + "/commondir");
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) {
      std::filesystem::path c(line);
      if (c.is_relative()) c = std::filesystem::path(target) / c;
      out.push_back(c.lexically_normal().string());
    }
  }
  return out;
}

std::vector<std::string> SetAsideNewGitEntries(const std::string& workdir,
                                               const GitEntries& before) {
  std::vector<std::string> moved;
  GitEntries now = FindGitEntries(workdir);
  for (const std::string& entry : now.paths) {
    if (std::binary_search(before.paths.begin(), before.paths.end(), entry)) continue;
    std::string aside = entry + ".made-in-sandbox";
    for (int n = 2; n < 100 && ::access(aside.c_str(), F_OK) == 0; ++n) {
      aside = absl::StrCat(entry, ".made-in-sandbox-", n);
    }
    // RENAME_NOREPLACE: never over something that appeared meanwhile.
    if (::renameat2(AT_FDCWD, entry.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) != 0) {
      continue;
    }
    moved.push_back(entry.substr(std::min(entry.size(), workdir.size() + 1)));
  }
  return moved;
}

std::string SetAsideNote(const std::vector<std::string>& set_aside) {
  if (set_aside.empty()) return "";
  return absl::StrCat(
      "[sandbox: the command made ", absl::StrJoin(set_aside, ", "),
      "; git would read it as configuration outside the sandbox, so it was renamed to "
      "<name>.made-in-sandbox. A repository is made outside the sandbox: call bash with "
      "escalate: true and a justification, and a person decides]");
}

}  // namespace agent::daemon::sandbox
