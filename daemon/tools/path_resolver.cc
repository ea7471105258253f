#include "daemon/tools/path_resolver.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {
namespace {

// Linux's own limit on symlinks followed during one lookup.
constexpr int kMaxSymlinkFollows = 40;

void PushComponentsFront(std::string_view path, std::deque<std::string>* queue) {
  std::vector<std::string> parts = absl::StrSplit(AbslView(path), '/', absl::SkipEmpty());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    queue->push_front(std::move(*it));
  }
}

void PopLastComponent(std::string* path) {
  size_t slash = path->rfind('/');
  if (slash == 0 || slash == std::string::npos) {
    *path = "/";
  } else {
    path->resize(slash);
  }
}

bool IsInside(const std::string& root, const std::string& path) {
  if (path == root) return true;
  if (root == "/") return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

}  // namespace

absl::StatusOr<std::string> ResolveInside(const std::string& workdir, std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("path contains a NUL byte");
  }
  char buf[PATH_MAX];
  if (::realpath(workdir.c_str(), buf) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("project directory ", workdir, " is not accessible: ", std::strerror(errno)));
  }
  const std::string root = buf;

  std::string resolved = path.empty() || path[0] != '/' ? root : "/";
  std::deque<std::string> pending;
  PushComponentsFront(path, &pending);
  bool missing = false;  // once a component is missing, the rest cannot be a symlink
  bool via_symlink = false;
  int follows = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      PopLastComponent(&resolved);
      continue;
    }
    std::string candidate =
        resolved == "/" ? absl::StrCat("/", part) : absl::StrCat(resolved, "/", part);
    if (missing) {
      resolved = std::move(candidate);
      continue;
    }
    struct stat st;
    if (::lstat(candidate.c_str(), &st) != 0) {
      // ENOENT, ENOTDIR, EACCES: nothing we could follow; the later open reports the error.
      missing = true;
      resolved = std::move(candidate);
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      resolved = std::move(candidate);
      continue;
    }
    if (++follows > kMaxSymlinkFollows) {
      return absl::InvalidArgumentError(
          absl::StrCat("path \"", AbslView(path), "\": too many levels of symbolic links"));
    }
    ssize_t n = ::readlink(candidate.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) {
      missing = true;
      resolved = std::move(candidate);
      continue;
    }
    via_symlink = true;
    std::string_view target(buf, static_cast<size_t>(n));
    if (!target.empty() && target[0] == '/') resolved = "/";
    PushComponentsFront(target, &pending);
  }

  if (!IsInside(root, resolved)) {
    return absl::PermissionDeniedError(
        absl::StrCat("path \"", AbslView(path), "\" is outside the project (", root, ")",
                     via_symlink ? absl::StrCat(": a symlink leads to ", resolved) : ""));
  }
  return resolved;
}

std::string RelativeToWorkdir(const std::string& workdir, const std::string& abs) {
  std::string root = workdir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (abs == root) return ".";
  if (root == "/") return abs.size() > 1 ? abs.substr(1) : ".";
  if (abs.size() > root.size() && abs.compare(0, root.size(), root) == 0 &&
      abs[root.size()] == '/') {
    return abs.substr(root.size() + 1);
  }
  return abs;
}

}  // namespace agent::daemon::tools
