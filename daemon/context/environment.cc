#include "daemon/context/environment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "daemon/context/git_changes.h"
#include "daemon/context/prompt_text.h"

namespace agent::daemon::context {
namespace {

constexpr size_t kMaxSmallFile = 64 * 1024;

// A small regular file's content, read without following a final symlink and without
// blocking on a FIFO; empty when it is anything else.
std::string ReadSmall(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st;
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[4096];
    ssize_t n;
    while (out.size() < kMaxSmallFile && (n = ::read(fd, buf, sizeof(buf))) > 0) {
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string Parent(const std::string& dir) {
  size_t slash = dir.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return dir.substr(0, slash);
}

// The git directory of the work tree containing `dir`: `.git` itself, or where a `.git` file
// (worktrees, submodules) points. Empty outside a repository.
std::string FindGitDir(std::string dir, std::string* top) {
  for (int depth = 0; depth < 64; ++depth) {
    std::string dot = dir == "/" ? "/.git" : dir + "/.git";
    struct stat st;
    if (::lstat(dot.c_str(), &st) == 0) {
      *top = dir;
      if (S_ISDIR(st.st_mode)) return dot;
      std::string text(absl::StripTrailingAsciiWhitespace(ReadSmall(dot)));
      if (!absl::StartsWith(text, "gitdir: ")) return "";
      std::string target = text.substr(8);
      return target.empty() || target[0] == '/' ? target : dir + "/" + target;
    }
    if (dir == "/") break;
    dir = Parent(dir);
  }
  return "";
}

}  // namespace

GitFacts ReadGitFacts(const std::string& dir, bool count_changes) {
  GitFacts g;
  std::string top;
  std::string git_dir = FindGitDir(dir, &top);
  if (git_dir.empty()) return g;
  std::string head(absl::StripTrailingAsciiWhitespace(ReadSmall(git_dir + "/HEAD")));
  if (head.empty()) return g;
  g.is_repo = true;
  if (absl::StartsWith(head, "ref: ")) {
    head = head.substr(5);
    if (absl::StartsWith(head, "refs/heads/")) head = head.substr(11);
    g.branch = head;
  } else {
    g.branch = "detached at " + head.substr(0, 7);
  }
  g.branch = OneLinePromptText(g.branch, 200);
  if (count_changes) g.changed_files = CountChangedFiles(top, git_dir);
  return g;
}

EnvironmentFacts CollectEnvironment(const std::string& project_root, const std::string& cwd,
                                    absl::Time now) {
  EnvironmentFacts f;
  f.project_root = project_root;
  f.cwd = cwd.empty() ? project_root : cwd;
  struct utsname u;
  f.os = ::uname(&u) == 0 ? absl::StrCat(u.sysname, " ", u.release) : "Linux";
  f.shell = "bash";
  f.date = absl::FormatTime("%Y-%m-%d (%A)", now, absl::LocalTimeZone());
  f.git = ReadGitFacts(f.cwd);
  return f;
}

std::string RenderEnvironment(const EnvironmentFacts& f) {
  std::string out = absl::StrCat("- Working directory: ", OneLinePromptText(f.cwd), "\n");
  if (f.project_root != f.cwd) {
    absl::StrAppend(&out, "- Project root: ", OneLinePromptText(f.project_root), "\n");
  }
  absl::StrAppend(&out, "- OS: ", f.os, "; shell: ", f.shell, "; today: ", f.date, "\n");
  if (!f.git.is_repo) {
    out += "- Not a git repository.";
  } else {
    absl::StrAppend(&out, "- Git repository, branch ", f.git.branch);
    if (f.git.changed_files == 0) out += ", no uncommitted changes";
    if (f.git.changed_files > 0) {
      absl::StrAppend(&out, ", ", f.git.changed_files, " changed or untracked file",
                      f.git.changed_files == 1 ? "" : "s");
    }
    out += ".";
  }
  return out;
}

}  // namespace agent::daemon::context
