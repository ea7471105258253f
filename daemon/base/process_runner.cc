#include "daemon/base/process_runner.h"

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

#include "absl/strings/str_cat.h"
#include "daemon/sandbox/probe.h"

namespace agent::daemon {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long the pipes may stay open after the program exited (a background child holding them).
constexpr auto kDrainLimit = std::chrono::milliseconds(200);
// How long the killed rest of the group may take to end.
constexpr auto kReapLimit = std::chrono::milliseconds(200);

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

struct Pipes {
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  ~Pipes() {
    for (int* fd : {&in[0], &in[1], &out[0], &out[1], &err[0], &err[1]}) CloseFd(*fd);
  }
};

// Reads what `fd` has into `into` (up to `cap`, the rest dropped); closes it at EOF or on an
// error.
void ReadSome(int& fd, std::string& into, size_t cap, bool& cut) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      const size_t room = cap - std::min(cap, into.size());
      into.append(buf, std::min(room, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) > room) cut = true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    CloseFd(fd);
    return;
  }
}

// Writes the rest of `input` from `*written`; closes the pipe when all is written or the
// program stopped reading (EPIPE: it need not read its input).
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

absl::Status Spawn(const ProcessSpec& spec, Pipes& p, pid_t* pid) {
  if (::pipe2(p.in, O_CLOEXEC) != 0 || ::pipe2(p.out, O_CLOEXEC) != 0 ||
      ::pipe2(p.err, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("cannot make pipes: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p.in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, p.out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p.err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
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
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int rc = posix_spawn(pid, spec.program.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  CloseFd(p.in[0]);
  CloseFd(p.out[1]);
  CloseFd(p.err[1]);
  if (rc == ENOENT && ::access(spec.program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(spec.program, " is not installed"));
  }
  if (rc != 0) {  // also a missing cwd: the child's chdir failed
    return absl::InternalError(
        absl::StrCat("cannot start ", spec.program, " in ", spec.cwd, ": ", std::strerror(rc)));
  }
  for (int fd : {p.in[1], p.out[0], p.err[0]}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  return absl::OkStatus();
}

// Reaps what the group kill left that is ours: the daemon is a subreaper, so a member whose
// parent died is our child now, and a zombie for as long as the daemon lives unless reaped.
// Then the sandbox's init, which bwrap (a confined hook) leaves behind in a session of its own.
void ReapLeftovers(pid_t pgid) {
  const auto until = SteadyClock::now() + kReapLimit;
  for (;;) {
    const pid_t r = ::waitpid(-pgid, nullptr, WNOHANG);
    if (r > 0) continue;
    if (r < 0 && errno != EINTR) break;  // ECHILD: nothing of ours is left in the group
    if (SteadyClock::now() >= until) break;
    ::poll(nullptr, 0, 5);  // killed already: a matter of a moment
  }
  sandbox::ReapOrphanedSandboxInits();
}

// Polls the pipes and the process until it exited and the pipes closed (or the drain limit
// passed), or the deadline: then the group is killed.
void Supervise(pid_t pid, Pipes& p, const ProcessSpec& spec,
               std::optional<SteadyClock::time_point> deadline, ProcessResult& run) {
  int pidfd = OpenPidFd(pid);
  size_t written = 0;
  if (spec.input.empty()) CloseFd(p.in[1]);
  int status = 0;
  bool reaped = false;
  std::optional<SteadyClock::time_point> drain_until;
  bool err_cut = false;
  for (;;) {
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      drain_until = SteadyClock::now() + kDrainLimit;
      CloseFd(p.in[1]);
    }
    if (reaped && p.out[0] < 0 && p.err[0] < 0) break;
    const auto now = SteadyClock::now();
    std::optional<SteadyClock::time_point> until = deadline;
    if (drain_until.has_value()) until = until ? std::min(*until, *drain_until) : *drain_until;
    if (until.has_value() && now >= *until) {
      if (!reaped) run.timed_out = true;
      break;
    }
    pollfd fds[4];
    int n = 0;
    if (p.in[1] >= 0) fds[n++] = {p.in[1], POLLOUT, 0};
    if (p.out[0] >= 0) fds[n++] = {p.out[0], POLLIN, 0};
    if (p.err[0] >= 0) fds[n++] = {p.err[0], POLLIN, 0};
    if (pidfd >= 0 && !reaped) fds[n++] = {pidfd, POLLIN, 0};
    // Without a pidfd the exit is noticed by polling waitpid.
    int64_t wait_ms = pidfd >= 0 ? 1000 : 10;
    if (until.has_value()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - now);
      wait_ms = std::min<int64_t>(wait_ms, left.count() + 1);
    }
    if (::poll(fds, n, static_cast<int>(wait_ms)) < 0 && errno != EINTR) break;
    if (p.in[1] >= 0) WriteSome(p.in[1], spec.input, &written);
    if (p.out[0] >= 0) ReadSome(p.out[0], run.out, spec.max_output, run.out_cut);
    if (p.err[0] >= 0) ReadSome(p.err[0], run.err, spec.max_output, err_cut);
  }
  // Whatever is left of the group (the program itself on a timeout, its background children).
  ::kill(-pid, SIGKILL);
  if (!reaped) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ReapLeftovers(pid);
  if (pidfd >= 0) ::close(pidfd);
  if (run.timed_out) return;
  if (WIFEXITED(status)) {
    run.exited = true;
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.term_signal = WTERMSIG(status);
  }
}

class RealRunner : public ProcessRunner {
 public:
  absl::StatusOr<ProcessResult> Run(const ProcessSpec& spec) const override {
    // A program that does not read its input must not kill the daemon (or a test) with
    // SIGPIPE: blocked on this thread, and a pending one taken before the mask is restored.
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ProcessResult run;
    Pipes pipes;
    pid_t pid = -1;
    const auto start = SteadyClock::now();
    absl::Status started = Spawn(spec, pipes, &pid);
    if (started.ok()) {
      std::optional<SteadyClock::time_point> deadline;
      if (spec.timeout.count() > 0) deadline = start + spec.timeout;
      Supervise(pid, pipes, spec, deadline, run);
    }
    run.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start);
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!started.ok()) return started;
    return run;
  }
};

}  // namespace

const ProcessRunner& RealProcessRunner() {
  static const RealRunner* runner = new RealRunner;  // never destroyed: usable at exit too
  return *runner;
}

}  // namespace agent::daemon
