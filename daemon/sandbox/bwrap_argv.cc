#include "daemon/sandbox/bwrap_argv.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace agent::daemon::sandbox {
namespace {

// The canonical path of `path` when it exists, else empty.
std::string Existing(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real == nullptr ? "" : std::string(real.get());
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Inside(const std::string& path, const std::string& dir) {
  return path == dir || (path.starts_with(dir) && (dir == "/" || path[dir.size()] == '/'));
}

void Add(std::vector<std::string>* argv, std::initializer_list<std::string> words) {
  argv->insert(argv->end(), words);
}

// Every `.git` of the work tree (its own, submodules', nested repositories', with the
// directories their `.git` files name) and `.agent`: read-only inside the writable work tree.
// Each is a mount point, so it cannot be renamed or removed either (`mv .git .old && cp -r
// .old .git` fails with EBUSY). The paths are resolved, so a `.agent` that is a symlink
// protects what it points to; what lies outside the work tree is read-only already.
void ProtectInside(const std::string& workdir, const GitEntries* known,
                   std::vector<std::string>* argv) {
  GitEntries found;
  if (known == nullptr) found = FindGitEntries(workdir);
  const char* home = std::getenv("HOME");
  std::vector<std::string> protect = GitControlPaths(known != nullptr ? *known : found, workdir,
                                                     UserGitConfigs(home == nullptr ? "" : home));
  protect.push_back(workdir + "/.agent");
  std::vector<std::string> bound;
  for (const std::string& p : protect) {
    std::string real = Existing(p);
    if (real.empty() || !Inside(real, workdir) ||
        std::find(bound.begin(), bound.end(), real) != bound.end()) {
      continue;
    }
    bound.push_back(real);
    Add(argv, {"--ro-bind", real, real});
  }
}

// The private /tmp and /var/tmp start empty: the regular files the command line names there,
// outside the work tree, bound read-only at the names it uses.
void BindNamedFiles(const std::vector<std::string>& named, const std::string& workdir,
                    std::vector<std::string>* argv) {
  for (const std::string& n : named) {
    if (n.empty() || n.front() != '/' || !(Inside(n, "/tmp") || Inside(n, "/var/tmp"))) continue;
    const std::string real = Existing(n);
    struct stat st;
    if (real.empty() || ::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!(Inside(real, "/tmp") || Inside(real, "/var/tmp"))) continue;  // visible already
    if (!workdir.empty() && Inside(real, workdir)) continue;            // bound with the project
    Add(argv, {"--ro-bind", real, n});
  }
}

void Hide(const SandboxPolicy& policy, const std::string& workdir, std::vector<std::string>* argv) {
  std::vector<std::string> covered;
  for (const std::string& h : policy.hide) {
    std::string real = Existing(h);
    // Nothing to hide; a path that holds the project is what the command works on.
    if (real.empty() || Inside(workdir, real)) continue;
    // Under a covered directory it is gone already (and no mount point can be made there).
    bool gone = false;
    for (const std::string& c : covered) gone = gone || Inside(real, c);
    if (gone) continue;
    if (IsDirectory(real)) {
      covered.push_back(real);
      Add(argv, {"--tmpfs", real, "--remount-ro", real});
    } else {
      Add(argv, {"--ro-bind", "/dev/null", real});
    }
  }
}

}  // namespace

std::vector<std::string> BwrapOptions(const SandboxPolicy& policy, const SandboxTarget& target) {
  std::vector<std::string> argv = {policy.bwrap, "--ro-bind", "/",     "/",       "--dev",
                                   "/dev",       "--proc",    "/proc", "--tmpfs", "/tmp"};
  if (IsDirectory("/var/tmp")) Add(&argv, {"--tmpfs", "/var/tmp"});
  const std::string& w = target.workdir;
  BindNamedFiles(target.readable, w, &argv);
  if (!w.empty()) {
    // Bound even when read-only: a project under /tmp would be gone under the private /tmp.
    const bool writable = policy.mode == SandboxMode::kWorkspaceWrite && !target.read_only;
    Add(&argv, {writable ? "--bind" : "--ro-bind", w, w});
    if (writable) ProtectInside(w, target.git, &argv);
  }
  Hide(policy, w, &argv);
  if (!target.proxy_dir.empty() && !policy.network) {
    // Read-only: connecting to a socket needs no write, and the command cannot fill or litter
    // the daemon's directory.
    Add(&argv, {"--ro-bind", target.proxy_dir, kProxyDirInside, "--ro-bind", policy.net_bridge,
                kNetBridgeInside});
  }
  Add(&argv, {"--unshare-all"});
  if (policy.network) Add(&argv, {"--share-net"});
  // --new-session: no TIOCSTI into a terminal. --die-with-parent: a daemon killed with -9
  // takes its commands along (PR_SET_PDEATHSIG: when the spawning thread ends). --cap-drop ALL:
  // root inside has no capabilities (it could otherwise remount what is read-only). bwrap always
  // sets no_new_privs.
  if (target.own_session) Add(&argv, {"--new-session", "--die-with-parent"});
  Add(&argv, {"--cap-drop", "ALL"});
  if (!target.cwd.empty()) Add(&argv, {"--chdir", target.cwd});
  return argv;
}

std::vector<std::string> BwrapContainOptions(const std::string& bwrap, const std::string& cwd) {
  std::vector<std::string> argv = {bwrap,           "--dev-bind", "/",    "/",
                                   "--unshare-pid", "--proc",     "/proc"};
  if (!cwd.empty()) Add(&argv, {"--chdir", cwd});
  return argv;
}

std::vector<std::string> BwrapArgv(const SandboxPolicy& policy, const SandboxTarget& target,
                                   const std::string& command) {
  std::vector<std::string> argv = BwrapOptions(policy, target);
  Add(&argv, {"--"});
  if (!target.proxy_dir.empty() && !policy.network) {
    Add(&argv, {kNetBridgeInside, std::string(kProxyDirInside) + "/proxy.sock", "--"});
  }
  Add(&argv, {"/bin/bash", "-c", command});
  return argv;
}

std::vector<std::string> SandboxEnvironment(const std::vector<std::string>& env) {
  static constexpr std::string_view kDropped[] = {
      "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",  "DBUS_SESSION_BUS_ADDRESS",
      "AGENT_SOCKET",  "TMPDIR",        "XDG_RUNTIME_DIR", "GNOME_KEYRING_CONTROL",
      "KRB5CCNAME",    "DOCKER_HOST",   "WAYLAND_DISPLAY", "DISPLAY"};
  std::vector<std::string> out;
  for (const std::string& e : env) {
    std::string_view name = std::string_view(e).substr(0, e.find('='));
    bool drop = false;
    for (std::string_view d : kDropped) drop = drop || name == d;
    if (!drop) out.push_back(e);
  }
  return out;
}

}  // namespace agent::daemon::sandbox
