// BackgroundJobs: the commands one session's `bash` calls started with `background: true` (a
// dev server, a watcher). Each runs through RunSubprocess on a thread of its own that lives as
// long as the command: the sandbox's --die-with-parent follows the thread that spawned the
// command, so a turn that ends never takes its jobs along. A job's output is kept until read
// (the newest kMaxUnreadBytes of it); `bash_job` reads it, lists the jobs and kills one; the
// session kills them all when it ends (KillAll).
//
// Thread-safety: thread-safe. KillAll waits for every job's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "daemon/tools/subprocess.h"

namespace agent::daemon::tools {

class BackgroundJobs {
 public:
  // Jobs alive at once; finished ones do not count.
  static constexpr int kMaxRunning = 8;
  // Jobs remembered, running or ended: the oldest ended ones are forgotten beyond it.
  static constexpr size_t kMaxKept = 32;
  // Output kept per job until read: the newest bytes; what was dropped is counted.
  static constexpr size_t kMaxUnreadBytes = 64 << 10;

  BackgroundJobs() = default;
  ~BackgroundJobs() { KillAll(); }
  BackgroundJobs(const BackgroundJobs&) = delete;
  BackgroundJobs& operator=(const BackgroundJobs&) = delete;

  // Starts `options` (its timeout, cancel flag and output callback are the job's own);
  // returns the job's number, 1 for the first. ResourceExhausted with kMaxRunning running,
  // FailedPrecondition after KillAll. `after` runs on the job's thread once the command ended;
  // what it returns (if anything) is added to the job's output.
  absl::StatusOr<int> Start(SubprocessOptions options, const std::string& shown_command,
                            std::function<std::string()> after = {});

  // The output since the last read and the job's state, as the model is told:
  // "[job 2 running: npm run dev]\n…" or "[job 2 ended: exit code 0]\n…". NotFound for an
  // unknown number.
  absl::StatusOr<std::string> Read(int id);
  // Kills the job (its whole process group; SIGTERM, then SIGKILL) and waits for it to end;
  // then as Read.
  absl::StatusOr<std::string> Kill(int id);
  // Waits up to `timeout` for the job to end; false when it still runs (or is unknown).
  bool WaitEnded(int id, std::chrono::milliseconds timeout);
  // One line per job: "job 1 running: …" / "job 2 ended (exit code 0): …"; empty without jobs.
  std::string List();
  // Jobs still running.
  int Running() const;
  // Kills every job and waits for each; later Starts are refused.
  void KillAll();

 private:
  struct Job {
    int id = 0;
    std::string command;
    std::atomic<bool> stop{false};
    std::thread thread;
    Mutex mu;
    std::string unread ABSL_GUARDED_BY(mu);
    uint64_t dropped ABSL_GUARDED_BY(mu) = 0;  // unread bytes that did not fit
    bool done ABSL_GUARDED_BY(mu) = false;
    CondVar ended;                           // signalled with `done`
    std::string ending ABSL_GUARDED_BY(mu);  // "exit code 0", "killed by signal 9", …
  };
  std::shared_ptr<Job> Find(int id);
  int RunningLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static std::string TakeReport(Job& job);

  Mutex kill_mu_;
  mutable Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon::tools
