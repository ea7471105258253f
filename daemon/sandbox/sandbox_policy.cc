#include "daemon/sandbox/sandbox_policy.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

// agentd-net-bridge beside this program (agentd), else on the usual paths.
std::string FindNetBridge() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string beside = (self.parent_path() / "agentd-net-bridge").string();
    if (::access(beside.c_str(), X_OK) == 0) return beside;
  }
  for (const char* p : {"/usr/bin/agentd-net-bridge", "/usr/local/bin/agentd-net-bridge"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
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
  for (const char* p : {// keys, cloud and cluster credentials
                        "/.ssh", "/.gnupg", "/.aws", "/.config/gcloud", "/.azure", "/.kube",
                        "/.docker/config.json", "/.password-store", "/.local/share/keyrings",
                        "/.vault-token", "/.terraform.d/credentials.tfrc.json",
                        // git hosts and registries
                        "/.netrc", "/.git-credentials", "/.config/git/credentials", "/.config/gh",
                        "/.npmrc", "/.pypirc", "/.cargo/credentials.toml", "/.cargo/credentials",
                        "/.gem/credentials", "/.m2/settings.xml",
                        // databases
                        "/.pgpass", "/.my.cnf",
                        // shell and REPL histories (commands typed with secrets in them)
                        "/.bash_history", "/.zsh_history", "/.zhistory", "/.histfile",
                        "/.local/share/fish/fish_history", "/.python_history", "/.psql_history",
                        "/.mysql_history", "/.sqlite_history", "/.node_repl_history"}) {
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
  if (!config.network && !config.network_allow.empty()) {
    absl::StatusOr<NetworkRules> rules =
        ParseNetworkRules(config.network_allow, config.network_deny);
    if (rules.ok()) {
      p.proxy = *std::move(rules);
    } else {
      p.network_problem = absl::StrCat("\"sandbox_network\": ", rules.status().message(),
                                       "; commands reach no host");
    }
  }
  if (!socket_path.empty()) {
    p.proxy_root = std::filesystem::path(AbsolutePath(socket_path)).parent_path().string();
  }
  p.net_bridge = FindNetBridge();
  uint32_t port = 0;
  if (absl::SimpleAtoi(Env("AGENT_TEST_PROXY_LOOPBACK_PORT"), &port) && port < 65536) {
    p.test_loopback_port = static_cast<uint16_t>(port);
  }
  if (config.hide.has_value()) {
    for (const std::string& h : *config.hide) {
      if (std::string e = ExpandHome(h, home); !e.empty()) p.hide.push_back(e);
    }
  } else {
    p.hide = DefaultHiddenPaths(home);
  }
  for (const std::string& s : config.show) {
    const std::string shown = ExpandHome(s, home);
    std::erase(p.hide, shown);
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
