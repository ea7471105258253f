#include "daemon/sandbox/probe.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/process_table.h"
#include "daemon/sandbox/bwrap_argv.h"

namespace agent::daemon::sandbox {
namespace {

constexpr auto kProbeLimit = std::chrono::seconds(5);
// How long an orphaned sandbox init is waited for: it is ending (bwrap's --die-with-parent,
// or a group kill), which takes a few ms.
constexpr auto kInitExitLimit = std::chrono::milliseconds(500);

std::string ReadSysctl(const char* path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v)) return "";
  return v;
}

struct RunResult {
  int status = -1;
  std::string stderr_text;
};

// Runs argv with stderr captured, bounded in time (a stuck bwrap is killed).
RunResult Run(std::vector<std::string> argv) {
  RunResult r;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.stderr_text = absl::StrCat("pipe2: ", std::strerror(errno));
    return r;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  char path_env[] = "PATH=/usr/bin:/bin";
  char* envp[] = {path_env, nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    r.stderr_text = absl::StrCat("cannot run ", argv[0], ": ", std::strerror(rc));
    r.status = rc == ENOENT ? -2 : -1;
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + kProbeLimit;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      r.stderr_text += " (no answer within 5 s)";
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0 && r.stderr_text.size() < 4096) r.stderr_text.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ReapOrphanedSandboxInits();  // bwrap left its sandbox's init to us
  r.status = status;
  return r;
}

// How many PID namespaces see `pid` ("self" or a number), ours first: the fields of "NSpid:"
// in its /proc status (readable for a zombie too). 0 when unknown: gone, or a kernel before
// 4.1.
int PidNamespaceDepth(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream fields(line.substr(6));
    int depth = 0;
    for (std::string f; fields >> f;) ++depth;
    return depth;
  }
  return 0;
}

// This process's children, every thread's (an orphan goes to any of them): from
// /proc/self/task/*/children, cheap; from the whole process table where the kernel lacks it.
std::vector<pid_t> OwnChildren() {
  std::vector<pid_t> out;
  bool listed = false;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(tasks)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(absl::StrCat("/proc/self/task/", e->d_name, "/children"));
      if (!in) continue;  // no such file, or the thread is gone
      listed = true;
      for (pid_t pid; in >> pid;) out.push_back(pid);
    }
    ::closedir(tasks);
  }
  if (listed) return out;
  const pid_t self = ::getpid();
  for (const ProcessEntry& p : ReadProcessTable()) {
    if (p.ppid == self) out.push_back(p.pid);
  }
  return out;
}

// What to do about a bwrap that could not create its namespaces, from the machine's settings.
std::string NamespaceFix() {
  if (ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1") {
    return "AppArmor restricts unprivileged user namespaces: allow bwrap with an AppArmor "
           "profile (Ubuntu 24.04: the bwrap-userns-restrict profile of apparmor-profiles), or "
           "run `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`";
  }
  if (ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0") {
    return "user namespaces are off: run `sudo sysctl kernel.unprivileged_userns_clone=1` (and "
           "add it to /etc/sysctl.d/ to keep it)";
  }
  if (ReadSysctl("/proc/sys/user/max_user_namespaces") == "0") {
    return "user namespaces are off: run `sudo sysctl user.max_user_namespaces=15000`";
  }
  return "in a container, start it with user namespaces allowed (docker: `--security-opt "
         "seccomp=unconfined --security-opt apparmor=unconfined`, or `--privileged`); or set "
         "\"sandbox\": \"off\" in config.json to run commands unconfined, asked about";
}

}  // namespace

void ReapOrphanedSandboxInits() {
  static const int own_depth = PidNamespaceDepth("self");
  if (own_depth == 0) return;
  std::vector<pid_t> inits = OwnChildren();
  std::erase_if(inits,
                [](pid_t pid) { return PidNamespaceDepth(std::to_string(pid)) <= own_depth; });
  const auto deadline = std::chrono::steady_clock::now() + kInitExitLimit;
  for (;;) {
    std::erase_if(inits, [](pid_t pid) {
      const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      return r > 0 || (r < 0 && errno != EINTR);  // reaped, or reaped by another caller
    });
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (inits.empty() || left.count() <= 0) return;
    // Our unreaped children: their pids cannot be reused, so a pidfd names the right one.
    std::vector<pollfd> exits;
    for (pid_t pid : inits) {
      const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
      if (fd >= 0) exits.push_back({fd, POLLIN, 0});
    }
    const bool all = exits.size() == inits.size();  // else (no pidfd_open) poll the clock
    ::poll(exits.data(), exits.size(), static_cast<int>(all ? left.count() : 2));
    for (const pollfd& p : exits) ::close(p.fd);
  }
}

ProbeResult Probe(const SandboxPolicy& policy) {
  ProbeResult out;
  if (::access(policy.bwrap.c_str(), X_OK) != 0) {
    out.reason = absl::StrCat("bubblewrap is not installed (", policy.bwrap, ": ",
                              std::strerror(errno), ")");
    out.fix =
        "install it: `sudo apt-get install bubblewrap` (Debian/Ubuntu), `sudo dnf install "
        "bubblewrap` (Fedora)";
    return out;
  }
  std::vector<std::string> argv = BwrapOptions(policy, SandboxTarget{"", "/"});
  argv.insert(argv.end(), {"--", "/bin/true"});
  RunResult r = Run(std::move(argv));
  if (r.status == 0) {
    out.available = true;
    return out;
  }
  std::string said = std::string(absl::StripAsciiWhitespace(r.stderr_text));
  if (size_t nl = said.find('\n'); nl != std::string::npos) said.resize(nl);
  out.reason = absl::StrCat("bubblewrap cannot create a sandbox here: ",
                            said.empty() ? "it failed without a message" : said);
  out.fix = NamespaceFix();
  return out;
}

}  // namespace agent::daemon::sandbox
