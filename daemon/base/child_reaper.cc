#include "daemon/base/child_reaper.h"

#include <dirent.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/process_table.h"

namespace agent::daemon {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long an orphaned sandbox init is waited for: it is ending, which takes a few ms.
constexpr auto kInitExitLimit = std::chrono::milliseconds(500);

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

}  // namespace

absl::Status BecomeChildSubreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return absl::InternalError(absl::StrCat("PR_SET_CHILD_SUBREAPER: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

void ReapGroup(pid_t pgid, std::chrono::milliseconds limit) {
  const auto until = SteadyClock::now() + limit;
  for (;;) {
    const pid_t r = ::waitpid(-pgid, nullptr, WNOHANG);
    if (r > 0) continue;
    if (r < 0 && errno != EINTR) return;  // ECHILD: nothing of ours is left in the group
    if (SteadyClock::now() >= until) return;
    ::poll(nullptr, 0, 5);
  }
}

void ReapOrphanedSandboxInits() {
  static const int own_depth = PidNamespaceDepth("self");
  if (own_depth == 0) return;
  std::vector<pid_t> inits = OwnChildren();
  std::erase_if(inits,
                [](pid_t pid) { return PidNamespaceDepth(std::to_string(pid)) <= own_depth; });
  const auto deadline = SteadyClock::now() + kInitExitLimit;
  for (;;) {
    std::erase_if(inits, [](pid_t pid) {
      const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      return r > 0 || (r < 0 && errno != EINTR);  // reaped, or reaped by another caller
    });
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
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

}  // namespace agent::daemon
