#include "daemon/hooks/hook_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

namespace agent::daemon::hooks {
namespace {

using Clock = std::chrono::steady_clock;

// How long the pipes may stay open after the hook exited (a background child holding them).
constexpr auto kDrainLimit = std::chrono::milliseconds(200);

struct Pipes {
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  ~Pipes() {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what `fd` has into `into` (up to the cap); closes it at EOF or on an error.
void ReadSome(int& fd, std::string& into, bool& cut) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      const size_t room = kMaxHookOutput - std::min(kMaxHookOutput, into.size());
      into.append(buf, std::min(room, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) > room) cut = true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    CloseFd(fd);
    return;
  }
}

// Writes the rest of `input` from `*written`; closes the pipe when all is written or the hook
// stopped reading (EPIPE: it need not read its input).
void WriteSome(int& fd, const std::string& input, size_t* written) {
  while (*written < input.size()) {
    ssize_t n = ::write(fd, input.data() + *written, input.size() - *written);
    if (n > 0) {
      *written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  CloseFd(fd);
}

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

bool Spawn(const HookProcess& proc, const std::string& cwd, const std::vector<std::string>& env,
           Pipes& p, pid_t* pid, std::string* error) {
  if (::pipe2(p.in, O_CLOEXEC) != 0 || ::pipe2(p.out, O_CLOEXEC) != 0 ||
      ::pipe2(p.err, O_CLOEXEC) != 0) {
    *error = "cannot make pipes";
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p.in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, p.out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p.err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* argv[] = {"/bin/sh", "-c", proc.command.c_str(), nullptr};
  int rc = posix_spawn(pid, "/bin/sh", &fa, &attr, const_cast<char* const*>(argv), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  CloseFd(p.in[0]);
  CloseFd(p.out[1]);
  CloseFd(p.err[1]);
  if (rc != 0) {
    *error = std::string("cannot start /bin/sh: ") + strerror(rc);
    return false;
  }
  for (int fd : {p.in[1], p.out[0], p.err[0]}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  return true;
}

// Polls the pipes and the process until it exited and the pipes closed (or the drain limit
// passed), or the deadline: then the group is killed.
void Supervise(pid_t pid, Pipes& p, const std::string& input, Clock::time_point deadline,
               HookRun& run) {
  int pidfd = OpenPidFd(pid);
  size_t written = 0;
  if (input.empty()) CloseFd(p.in[1]);
  int status = 0;
  bool reaped = false;
  std::optional<Clock::time_point> drain_until;
  for (;;) {
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      drain_until = Clock::now() + kDrainLimit;
      CloseFd(p.in[1]);
    }
    if (reaped && p.out[0] < 0 && p.err[0] < 0) break;
    const auto now = Clock::now();
    const auto until = drain_until ? std::min(*drain_until, deadline) : deadline;
    if (now >= until) {
      if (!reaped) run.timed_out = true;
      break;
    }
    pollfd fds[4];
    int n = 0;
    if (p.in[1] >= 0) fds[n++] = {p.in[1], POLLOUT, 0};
    if (p.out[0] >= 0) fds[n++] = {p.out[0], POLLIN, 0};
    if (p.err[0] >= 0) fds[n++] = {p.err[0], POLLIN, 0};
    if (pidfd >= 0 && !reaped) fds[n++] = {pidfd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    // Without a pidfd the exit is noticed by polling waitpid.
    const int wait_ms = static_cast<int>(std::min<int64_t>(left + 1, pidfd >= 0 ? 1000 : 10));
    if (::poll(fds, n, wait_ms) < 0 && errno != EINTR) break;
    if (p.in[1] >= 0) WriteSome(p.in[1], input, &written);
    if (p.out[0] >= 0) ReadSome(p.out[0], run.out, run.out_cut);
    bool err_cut = false;
    if (p.err[0] >= 0) ReadSome(p.err[0], run.err, err_cut);
  }
  // Whatever is left of the group (the hook itself on a timeout, its background children).
  ::kill(-pid, SIGKILL);
  if (!reaped) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  if (run.timed_out) return;
  if (WIFEXITED(status)) {
    run.exited = true;
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.term_signal = WTERMSIG(status);
  }
}

HookRun RunOne(const HookProcess& proc, const std::string& input, const std::string& cwd,
               const std::vector<std::string>& env) {
  HookRun run;
  // A hook that does not read its input must not kill the daemon (or a test) with SIGPIPE:
  // blocked on this thread, and a pending one taken before the mask is restored.
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  Pipes pipes;
  pid_t pid = -1;
  const auto start = Clock::now();
  if (Spawn(proc, cwd, env, pipes, &pid, &run.error)) {
    run.started = true;
    Supervise(pid, pipes, input, start + proc.timeout, run);
  }
  run.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return run;
}

}  // namespace

std::vector<HookRun> RunHooks(const std::vector<HookProcess>& procs, const std::string& input,
                              const std::string& cwd, const std::vector<std::string>& env) {
  std::vector<HookRun> runs(procs.size());
  if (procs.size() == 1) {
    runs[0] = RunOne(procs[0], input, cwd, env);
    return runs;
  }
  std::vector<std::thread> threads;
  for (size_t i = 1; i < procs.size(); ++i) {
    try {
      threads.emplace_back([&, i] { runs[i] = RunOne(procs[i], input, cwd, env); });
    } catch (const std::system_error&) {
      runs[i] = RunOne(procs[i], input, cwd, env);  // out of threads: in turn
    }
  }
  runs[0] = RunOne(procs[0], input, cwd, env);
  for (std::thread& t : threads) t.join();
  return runs;
}

}  // namespace agent::daemon::hooks
