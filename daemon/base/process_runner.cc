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
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/base/child_reaper.h"

namespace agent::daemon {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long the pipes may stay open after the program exited (a background child holding them).
constexpr auto kDrainLimit = std::chrono::milliseconds(200);
// How long the killed rest of the group may take to end.
constexpr auto kReapLimit = std::chrono::milliseconds(200);

// Reads what `fd` has into `into` (up to `cap`, the rest dropped); closes it at EOF or on an
// error.
void ReadSome(UniqueFd& fd, std::string& into, size_t cap, bool& cut) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      const size_t room = cap - std::min(cap, into.size());
      into.append(buf, std::min(room, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) > room) cut = true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    fd.Close();
    return;
  }
}

// Writes the rest of `input` from `*written`; closes the pipe when all is written or the
// program stopped reading (EPIPE: it need not read its input).
void WriteSome(UniqueFd& fd, const std::string& input, size_t* written) {
  while (*written < input.size()) {
    ssize_t n = ::write(fd.get(), input.data() + *written, input.size() - *written);
    if (n > 0) {
      *written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  fd.Close();
}

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

// A pipe whose ends are close-on-exec: [0] to read, [1] to write.
absl::Status MakePipe(UniqueFd (&ends)[2]) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("cannot make a pipe: ", std::strerror(errno)));
  }
  ends[0].Reset(fds[0]);
  ends[1].Reset(fds[1]);
  return absl::OkStatus();
}

// posix_spawn's attributes and file actions, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&attr_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// NULL-terminated pointers into `words` for posix_spawn; `words` must outlive them.
std::vector<char*> Pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  out.reserve(words.size() + 1);
  for (std::string& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

absl::StatusOr<StartedProcess> StartProcess(const ProcessSpec& spec) {
  UniqueFd in[2], out[2], err[2];
  if (!spec.stdin_null) RETURN_IF_ERROR(MakePipe(in));
  RETURN_IF_ERROR(MakePipe(out));
  RETURN_IF_ERROR(MakePipe(err));
  SpawnSetup setup;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  ::posix_spawnattr_setsigmask(setup.attr(), &none);
  ::posix_spawnattr_setsigdefault(setup.attr(), &all);
  ::posix_spawnattr_setpgroup(setup.attr(), 0);
  ::posix_spawnattr_setflags(
      setup.attr(), POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t* actions = setup.actions();
  if (spec.stdin_null) {
    ::posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0);
  } else {
    ::posix_spawn_file_actions_adddup2(actions, in[0].get(), 0);
  }
  ::posix_spawn_file_actions_adddup2(actions, out[1].get(), 1);
  ::posix_spawn_file_actions_adddup2(actions, err[1].get(), 2);
  if (!spec.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(actions, spec.cwd.c_str());
  // Whatever else the daemon has open without O_CLOEXEC stays out of the program.
  ::posix_spawn_file_actions_addclosefrom_np(actions, 3);
  std::vector<std::string> words = spec.argv, env = spec.env;
  std::vector<char*> argv = Pointers(words), envp = Pointers(env);
  StartedProcess started;
  const int rc = ::posix_spawn(&started.pid, spec.program.c_str(), actions, setup.attr(),
                               argv.data(), envp.data());
  if (rc == ENOENT && ::access(spec.program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(spec.program, " is not installed"));
  }
  if (rc != 0) {  // also a missing cwd: the child's chdir failed
    return absl::InternalError(absl::StrCat("cannot start ", spec.program, " in ",
                                            spec.cwd.empty() ? "." : spec.cwd, ": ",
                                            std::strerror(rc)));
  }
  // Our copies of the child's ends close here: only the child may hold them, or EOF never
  // comes.
  started.in = std::move(in[1]);
  started.out = std::move(out[0]);
  started.err = std::move(err[0]);
  return started;
}

// Reaps what the group kill left that is ours, then the sandbox's init, which bwrap (a
// confined hook) leaves behind in a session of its own.
void ReapLeftovers(pid_t pgid) {
  ReapGroup(pgid, kReapLimit);
  ReapOrphanedSandboxInits();
}

// Polls the pipes and the process until it exited and the pipes closed (or the drain limit
// passed), or the deadline: then the group is killed.
void Supervise(StartedProcess& p, const ProcessSpec& spec,
               std::optional<SteadyClock::time_point> deadline, ProcessResult& run) {
  const pid_t pid = p.pid;
  for (const UniqueFd* fd : {&p.in, &p.out, &p.err}) {
    if (fd->open()) ::fcntl(fd->get(), F_SETFL, O_NONBLOCK);
  }
  UniqueFd pidfd(OpenPidFd(pid));
  size_t written = 0;
  if (spec.input.empty()) p.in.Close();
  int status = 0;
  bool reaped = false;
  std::optional<SteadyClock::time_point> drain_until;
  bool err_cut = false;
  for (;;) {
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      drain_until = SteadyClock::now() + kDrainLimit;
      p.in.Close();
    }
    if (reaped && !p.out.open() && !p.err.open()) break;
    const auto now = SteadyClock::now();
    std::optional<SteadyClock::time_point> until = deadline;
    if (drain_until.has_value()) until = until ? std::min(*until, *drain_until) : *drain_until;
    if (until.has_value() && now >= *until) {
      if (!reaped) run.timed_out = true;
      break;
    }
    pollfd fds[4];
    int n = 0;
    if (p.in.open()) fds[n++] = {p.in.get(), POLLOUT, 0};
    if (p.out.open()) fds[n++] = {p.out.get(), POLLIN, 0};
    if (p.err.open()) fds[n++] = {p.err.get(), POLLIN, 0};
    if (pidfd.open() && !reaped) fds[n++] = {pidfd.get(), POLLIN, 0};
    // Without a pidfd the exit is noticed by polling waitpid.
    int64_t wait_ms = pidfd.open() ? 1000 : 10;
    if (until.has_value()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - now);
      wait_ms = std::min<int64_t>(wait_ms, left.count() + 1);
    }
    if (::poll(fds, n, static_cast<int>(wait_ms)) < 0 && errno != EINTR) break;
    if (p.in.open()) WriteSome(p.in, spec.input, &written);
    if (p.out.open()) ReadSome(p.out, run.out, spec.max_output, run.out_cut);
    if (p.err.open()) ReadSome(p.err, run.err, spec.max_output, err_cut);
  }
  // Whatever is left of the group (the program itself on a timeout, its background children).
  ::kill(-pid, SIGKILL);
  if (!reaped) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ReapLeftovers(pid);
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
    const auto start = SteadyClock::now();
    ProcessSpec piped = spec;
    piped.stdin_null = false;  // the input goes on a pipe
    absl::StatusOr<StartedProcess> started = StartProcess(piped);
    if (started.ok()) {
      std::optional<SteadyClock::time_point> deadline;
      if (spec.timeout.count() > 0) deadline = start + spec.timeout;
      Supervise(*started, spec, deadline, run);
    }
    run.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start);
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!started.ok()) return started.status();
    return run;
  }

  absl::StatusOr<StartedProcess> Start(const ProcessSpec& spec) const override {
    return StartProcess(spec);
  }
};

}  // namespace

const ProcessRunner& RealProcessRunner() {
  static const RealRunner* runner = new RealRunner;  // never destroyed: usable at exit too
  return *runner;
}

}  // namespace agent::daemon
