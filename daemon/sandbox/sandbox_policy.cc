#include "daemon/sandbox/sandbox_policy.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/paths.h"

namespace agent::daemon::sandbox {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string ExpandHome(const std::string& path, const std::string& home) {
  if (path.starts_with("~/")) return home.empty() ? "" : AbsolutePath(home + path.substr(1));
  return AbsolutePath(path);
}

std::string FindBwrap() {
  if (std::string named = Env("AGENT_BWRAP"); !named.empty()) return named;
  for (const char* p : {"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "/usr/bin/bwrap";
}

}  // namespace

const char* ModeName(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kWorkspaceWrite:
      return "workspace-write";
    case SandboxMode::kReadOnly:
      return "read-only";
    case SandboxMode::kOff:
      return "off";
  }
  return "off";
}

std::vector<std::string> DefaultHiddenPaths(const std::string& home) {
  std::vector<std::string> out;
  if (home.empty()) return out;
  for (const char* p : {"/.ssh", "/.gnupg", "/.aws", "/.config/gcloud", "/.docker/config.json",
                        "/.netrc", "/.git-credentials", "/.kube", "/.azure", "/.password-store"}) {
    out.push_back(AbsolutePath(home + p));
  }
  return out;
}

SandboxPolicy PolicyFromConfig(const SandboxConfig& config, const std::string& home,
                               const std::vector<std::string>& agent_dirs,
                               const std::string& socket_path, const std::string& runtime_dir) {
  SandboxPolicy p;
  p.mode = config.mode == "off"         ? SandboxMode::kOff
           : config.mode == "read-only" ? SandboxMode::kReadOnly
                                        : SandboxMode::kWorkspaceWrite;
  p.network = config.network;
  if (config.hide.has_value()) {
    for (const std::string& h : *config.hide) {
      if (std::string e = ExpandHome(h, home); !e.empty()) p.hide.push_back(e);
    }
  } else {
    p.hide = DefaultHiddenPaths(home);
  }
  for (const std::string& d : agent_dirs) p.hide.push_back(AbsolutePath(d));
  if (!socket_path.empty()) {
    // The socket itself too: its directory is not covered when it holds the project.
    p.hide.push_back(std::filesystem::path(AbsolutePath(socket_path)).parent_path().string());
    p.hide.push_back(AbsolutePath(socket_path));
  }
  if (!runtime_dir.empty()) p.hide.push_back(AbsolutePath(runtime_dir));
  p.bwrap = FindBwrap();
  return p;
}

SandboxPolicy DaemonPolicy(const SandboxConfig& config, const std::string& socket_path) {
  return PolicyFromConfig(config, Env("HOME"), {ConfigDir(), StateDir()}, socket_path,
                          Env("XDG_RUNTIME_DIR"));
}

}  // namespace agent::daemon::sandbox
