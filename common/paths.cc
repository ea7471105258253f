#include "common/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace agent {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string Home() {
  std::string home = Env("HOME");
  return home.empty() ? std::string("/tmp") : home;
}

}  // namespace

std::string SocketPath() {
  if (std::string s = Env("AGENT_SOCKET"); !s.empty()) return s;
  if (std::string r = Env("XDG_RUNTIME_DIR"); !r.empty()) return r + "/agent/agentd.sock";
  return absl::StrCat("/tmp/agent-", ::getuid(), "/agentd.sock");
}

std::string StateDir() {
  if (std::string s = Env("XDG_STATE_HOME"); !s.empty()) return s + "/agent";
  return Home() + "/.local/state/agent";
}

std::string ConfigDir() {
  if (std::string s = Env("XDG_CONFIG_HOME"); !s.empty()) return s + "/agent";
  return Home() + "/.config/agent";
}

std::string ProjectSettingsPath(const std::string& project) {
  return project + "/.agent/settings.json";
}

absl::Status EnsurePrivateDir(const std::string& dir) {
  if (auto s = MakeDirs(dir, 0700); !s.ok()) return s;
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return absl::InternalError(absl::StrCat("stat ", dir));
  if (!S_ISDIR(st.st_mode)) return absl::PermissionDeniedError(dir + " is not a directory");
  if (st.st_uid != ::getuid()) {
    return absl::PermissionDeniedError(dir + " belongs to another user");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return absl::PermissionDeniedError(dir + " is accessible by other users and cannot be fixed");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ProjectDirectory(const std::string& workdir) {
  if (workdir.empty() || workdir[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("workdir must be an absolute path, got \"", workdir, "\""));
  }
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(workdir, ec).string();
  if (ec || !std::filesystem::is_directory(canonical, ec) || ec) {
    return absl::InvalidArgumentError(absl::StrCat("not a directory: ", workdir));
  }
  return canonical;
}

std::string DirectoryInside(const std::string& root, const std::string& cwd) {
  if (cwd.empty() || cwd[0] != '/') return root;
  std::error_code ec;
  const std::string dir = std::filesystem::canonical(cwd, ec).string();
  if (ec || !std::filesystem::is_directory(dir, ec) || ec) return root;
  const std::string base = std::filesystem::canonical(root, ec).string();
  if (ec) return root;
  if (dir == base || (dir.size() > base.size() && dir.compare(0, base.size(), base) == 0 &&
                      (base == "/" || dir[base.size()] == '/'))) {
    return dir;
  }
  return root;
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) return path;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace agent
