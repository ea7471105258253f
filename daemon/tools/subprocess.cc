#include "daemon/tools/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/process_table.h"
#include "common/tool_env.h"
#include "common/utf8.h"
#include "daemon/base/child_reaper.h"
#include "daemon/base/unique_fd.h"
#include "daemon/tools/output_cap.h"

namespace agent::daemon::tools {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often a running command checks its cancel flag and deadline.
constexpr milliseconds kRunningPoll{20};
// Once bash is gone we only wait for its leftovers: look more often.
constexpr milliseconds kCleanupPoll{5};
// Bytes read from one pipe before going back to check cancel and the clock.
constexpr size_t kMaxReadPerWake = 1 << 20;

// Ends the process group: SIGTERM first, SIGKILL once the grace period is over.
class GroupKiller {
 public:
  GroupKiller(pid_t pgid, milliseconds grace) : pgid_(pgid), grace_(grace) {}

  void Terminate(Clock::time_point now) {
    if (term_sent_) return;
    ::kill(-pgid_, SIGTERM);
    term_sent_ = true;
    term_sent_at_ = now;
  }
  void KillNow() {
    if (kill_sent_) return;
    KillAgain();
  }
  // Also reaches a member forked while the last SIGKILL went out.
  void KillAgain() {
    ::kill(-pgid_, SIGKILL);
    kill_sent_ = true;
  }
  // Sends SIGKILL when the grace period is over.
  void Tick(Clock::time_point now) {
    if (term_sent_ && !kill_sent_ && now - term_sent_at_ >= grace_) KillNow();
  }
  bool terminating() const { return term_sent_; }
  bool GroupEmpty() const { return ::kill(-pgid_, 0) != 0 && errno == ESRCH; }
  // False when every member left is a zombie: dead, only waiting for its parent (init, when
  // we are not a subreaper) to reap it. Reads /proc; only asked when the group is not empty.
  bool HasLiveMembers() const;
  // Reaps members of the group that became our children (only when we are a subreaper).
  void ReapOrphans() const {
    int status;
    while (::waitpid(-pgid_, &status, WNOHANG) > 0) {
    }
  }

 private:
  pid_t pgid_;
  milliseconds grace_;
  bool term_sent_ = false;
  Clock::time_point term_sent_at_{};
  bool kill_sent_ = false;
};

bool GroupKiller::HasLiveMembers() const {
  std::vector<ProcessEntry> table = ReadProcessTable();
  if (table.empty()) return true;  // cannot tell: assume the worst
  for (const ProcessEntry& p : table) {
    if (p.pgrp == pgid_ && p.state != 'Z' && p.state != 'X') return true;
  }
  return false;
}

struct Stream {
  UniqueFd fd;
  bool is_stderr;
};

// Where the bytes of both pipes go: one UTF-8 decoder per pipe (so a character split between
// two reads is joined, and stdout's half never meets stderr's), then the cap and the callback.
// Everything past this point is valid UTF-8 text.
class Collector {
 public:
  explicit Collector(const SubprocessOptions& options)
      : options_(options), cap_(options.head_bytes, options.tail_bytes) {}

  void Add(std::string_view bytes, bool is_stderr) {
    raw_bytes_ += bytes.size();
    Deliver(decoders_[is_stderr ? 1 : 0].Feed(bytes), is_stderr);
  }
  // The pipe ended (or we stop reading it): a character cut short becomes U+FFFD.
  void End(bool is_stderr) { Deliver(decoders_[is_stderr ? 1 : 0].Finish(), is_stderr); }

  uint64_t raw_bytes() const { return raw_bytes_; }
  const OutputCap& cap() const { return cap_; }

 private:
  void Deliver(const std::string& text, bool is_stderr) {
    if (text.empty()) return;
    cap_.Append(text);
    if (options_.on_output) options_.on_output(text, is_stderr);
  }

  const SubprocessOptions& options_;
  OutputCap cap_;
  Utf8Decoder decoders_[2];
  uint64_t raw_bytes_ = 0;
};

// Reads what is available; false when the pipe reached EOF or failed.
bool ReadAvailable(Stream& s, Collector& out) {
  char buf[65536];
  size_t total = 0;
  while (total < kMaxReadPerWake) {
    ssize_t n = ::read(s.fd.get(), buf, sizeof buf);
    if (n > 0) {
      total += static_cast<size_t>(n);
      out.Add(std::string_view(buf, static_cast<size_t>(n)), s.is_stderr);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;  // EOF or error
  }
  return true;
}

// Waits up to `timeout` for the open pipes (and `wake_fd`, when >= 0: a pidfd that turns
// readable when bash exits) and reads them; closes those at EOF.
void PumpOutput(Stream* streams, int wake_fd, Collector& out, milliseconds timeout) {
  pollfd pfds[3];
  Stream* by_index[3] = {nullptr, nullptr, nullptr};
  nfds_t n = 0;
  if (wake_fd >= 0) pfds[n++] = {wake_fd, POLLIN, 0};
  for (int i = 0; i < 2; ++i) {
    if (!streams[i].fd.open()) continue;
    pfds[n] = {streams[i].fd.get(), POLLIN, 0};
    by_index[n] = &streams[i];
    ++n;
  }
  int ready = ::poll(n == 0 ? nullptr : pfds, n, static_cast<int>(timeout.count()));
  if (ready <= 0) return;  // timeout, or EINTR: the caller's loop comes back soon
  for (nfds_t i = 0; i < n; ++i) {
    if (pfds[i].revents == 0 || by_index[i] == nullptr) continue;
    if (!ReadAvailable(*by_index[i], out)) {
      by_index[i]->fd.Close();
      out.End(by_index[i]->is_stderr);
    }
  }
}

bool CancelRequested(const SubprocessOptions& options) {
  return options.cancelled != nullptr && options.cancelled->load(std::memory_order_relaxed);
}

// Starts `/bin/bash -c command` (or options.argv) with its stdout and stderr on the read ends
// in `streams`, through the process seam.
absl::StatusOr<pid_t> Spawn(const SubprocessOptions& options, Stream* streams) {
  ProcessSpec spec;
  spec.argv = options.argv;
  if (spec.argv.empty()) spec.argv = {"/bin/bash", "-c", options.command};
  spec.program = spec.argv.front();
  spec.cwd = options.cwd;
  // The command's environment is exactly the one given: the daemon's own may hold secrets.
  spec.env = options.env.empty() ? MinimalToolEnvironment() : options.env;
  spec.stdin_null = true;
  const ProcessRunner& runner = options.runner ? *options.runner : RealProcessRunner();
  absl::StatusOr<StartedProcess> started = runner.Start(spec);
  if (!started.ok()) return started.status();
  // Non-blocking, so draining a pipe never waits on a writer that is still alive.
  for (UniqueFd* fd : {&started->out, &started->err}) {
    ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  }
  streams[0].fd = std::move(started->out);
  streams[1].fd = std::move(started->err);
  return started->pid;
}

// Phase 1: bash is running. Reads its output until it exits; a cancel or the deadline ends
// its group. Fills how it ended into `result`.
void RunUntilBashExits(const SubprocessOptions& options, Clock::time_point start, Stream* streams,
                       Collector& out, GroupKiller& killer, SubprocessResult* result) {
  // A pidfd wakes the poll as soon as bash exits; without one (old kernels) the poll
  // interval bounds the delay instead.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, result->pid, 0)));
  const bool has_deadline = options.timeout.count() > 0;
  const Clock::time_point deadline = start + options.timeout;
  for (;;) {
    PumpOutput(streams, pidfd.get(), out, kRunningPoll);
    Clock::time_point now = Clock::now();
    if (!killer.terminating()) {
      if (CancelRequested(options)) {
        result->cancelled = true;
        killer.Terminate(now);
      } else if (has_deadline && now >= deadline) {
        result->timed_out = true;
        killer.Terminate(now);
      }
    }
    killer.Tick(now);
    int status = 0;
    pid_t w = ::waitpid(result->pid, &status, WNOHANG);
    if (w == result->pid) {
      if (WIFEXITED(status)) {
        result->exited = true;
        result->exit_code = WEXITSTATUS(status);
      } else if (WIFSIGNALED(status)) {
        result->term_signal = WTERMSIG(status);
      }
      return;
    }
    if (w < 0 && errno == ECHILD) return;  // someone else reaped it (SIGCHLD ignored)
  }
}

// Phase 2: bash is gone; ends what is left of its group, bounded in time.
void EndLeftovers(const SubprocessOptions& options, Stream* streams, Collector& out,
                  GroupKiller& killer) {
  const Clock::time_point group_deadline = Clock::now() + options.kill_grace + options.drain_limit;
  for (;;) {
    killer.ReapOrphans();
    if (killer.GroupEmpty()) break;
    if (!killer.HasLiveMembers()) {
      // Only zombies: reap those that are ours; the others wait for init, harmlessly.
      killer.ReapOrphans();
      break;
    }
    Clock::time_point now = Clock::now();
    if (now >= group_deadline) {
      // Past the grace: whatever is left gets SIGKILL, and the turn does not end while a
      // killed member still shows as running, unless it is stuck longer than kill_wait.
      killer.KillAgain();
      if (now >= group_deadline + options.kill_wait) break;
      PumpOutput(streams, -1, out, kCleanupPoll);
      continue;
    }
    killer.Terminate(now);
    if (CancelRequested(options)) killer.KillNow();
    killer.Tick(now);
    PumpOutput(streams, -1, out, kCleanupPoll);
  }
}

// Phase 3: reads what is still in the pipes; bounded, since an escaped process may hold them.
void DrainPipes(const SubprocessOptions& options, Stream* streams, Collector& out) {
  const Clock::time_point drain_deadline = Clock::now() + options.drain_limit;
  while (streams[0].fd.open() || streams[1].fd.open()) {
    Clock::time_point now = Clock::now();
    if (now >= drain_deadline) break;
    auto left = std::chrono::duration_cast<milliseconds>(drain_deadline - now);
    PumpOutput(streams, -1, out, std::min(left + milliseconds(1), kRunningPoll));
  }
  // Pipes still open past the deadline: what was held of a character is cut short.
  out.End(false);
  out.End(true);
}

}  // namespace

absl::StatusOr<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  const Clock::time_point start = Clock::now();
  Stream streams[2] = {{UniqueFd(), false}, {UniqueFd(), true}};
  absl::StatusOr<pid_t> pid = Spawn(options, streams);
  if (!pid.ok()) return pid.status();

  SubprocessResult result;
  result.pid = *pid;
  Collector out(options);
  GroupKiller killer(*pid, options.kill_grace);
  RunUntilBashExits(options, start, streams, out, killer, &result);
  EndLeftovers(options, streams, out, killer);
  DrainPipes(options, streams, out);
  // bwrap (options.argv) does not wait for its sandbox's init: as subreaper, we must.
  ReapOrphanedSandboxInits();

  result.output = out.cap().Render();
  MakeValidUtf8(&result.output);  // a guard: the cap cuts at character boundaries already
  result.output_bytes = out.raw_bytes();
  result.omitted_bytes = out.cap().omitted_bytes();
  result.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  return result;
}

}  // namespace agent::daemon::tools
