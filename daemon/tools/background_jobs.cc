#include "daemon/tools/background_jobs.h"

#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace agent::daemon::tools {
namespace {

std::string Ending(const absl::StatusOr<SubprocessResult>& r) {
  if (!r.ok()) return absl::StrCat("could not start: ", r.status().message());
  if (r->cancelled) return "killed";
  if (r->exited) return absl::StrCat("exit code ", r->exit_code);
  if (r->term_signal != 0) return absl::StrCat("killed by signal ", r->term_signal);
  return "exit status unknown";
}

}  // namespace

absl::StatusOr<int> BackgroundJobs::Start(SubprocessOptions options,
                                          const std::string& shown_command,
                                          std::function<std::string()> after) {
  auto job = std::make_shared<Job>();
  job->command = shown_command;
  options.timeout = std::chrono::milliseconds(0);  // as long as the session allows
  options.cancelled = &job->stop;
  options.on_output = [raw = job.get()](std::string_view chunk, bool) {
    MutexLock l(&raw->mu);
    raw->unread.append(chunk);
    if (raw->unread.size() > kMaxUnreadBytes) {
      // Cut at a character boundary: the chunks are valid UTF-8, so skip continuation bytes.
      size_t cut = raw->unread.size() - kMaxUnreadBytes;
      while (cut < raw->unread.size() && (raw->unread[cut] & 0xC0) == 0x80) ++cut;
      raw->dropped += cut;
      raw->unread.erase(0, cut);
    }
  };
  // The result's own copy of the output is not needed: what was not read is in `unread`.
  options.head_bytes = 0;
  options.tail_bytes = 0;

  std::vector<std::shared_ptr<Job>> forgotten;  // joined outside the lock
  {
    MutexLock l(&mu_);
    if (closed_) return absl::FailedPreconditionError("the session is ending");
    if (RunningLocked() >= kMaxRunning) {
      return absl::ResourceExhaustedError(
          absl::StrCat(kMaxRunning,
                       " background jobs are running: end one with bash_job "
                       "{\"job\": N, \"kill\": true} first"));
    }
    job->id = next_id_++;
    // Started under mu_, so that KillAll never sees a job without its thread.
    job->thread =
        std::thread([raw = job.get(), options = std::move(options), after = std::move(after)] {
          absl::StatusOr<SubprocessResult> r = RunSubprocess(options);
          const std::string note = after ? after() : "";
          MutexLock jl(&raw->mu);
          if (!note.empty()) absl::StrAppend(&raw->unread, raw->unread.empty() ? "" : "\n", note);
          raw->ending = Ending(r);
          raw->done = true;
          raw->ended.SignalAll();
        });
    jobs_[job->id] = job;
    for (auto it = jobs_.begin(); it != jobs_.end() && jobs_.size() > kMaxKept;) {
      bool done;
      {
        MutexLock jl(&it->second->mu);
        done = it->second->done;
      }
      if (!done) {
        ++it;
        continue;
      }
      forgotten.push_back(std::move(it->second));
      it = jobs_.erase(it);
    }
  }
  for (auto& j : forgotten) {
    if (j->thread.joinable()) j->thread.join();  // it has ended: at once
  }
  return job->id;
}

std::shared_ptr<BackgroundJobs::Job> BackgroundJobs::Find(int id) {
  MutexLock l(&mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::string BackgroundJobs::TakeReport(Job& job) {
  MutexLock l(&job.mu);
  std::string out =
      job.done ? absl::StrCat("[job ", job.id, " ended (", job.ending, "): ", job.command, "]\n")
               : absl::StrCat("[job ", job.id, " running: ", job.command, "]\n");
  if (job.dropped > 0) {
    absl::StrAppend(&out, "[", job.dropped, " bytes of output were not kept]\n");
    job.dropped = 0;
  }
  if (job.unread.empty()) {
    absl::StrAppend(&out, "(no new output)");
  } else {
    absl::StrAppend(&out, job.unread);
    job.unread.clear();
  }
  return out;
}

absl::StatusOr<std::string> BackgroundJobs::Read(int id) {
  std::shared_ptr<Job> job = Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("no background job ", id));
  return TakeReport(*job);
}

absl::StatusOr<std::string> BackgroundJobs::Kill(int id) {
  std::shared_ptr<Job> job = Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("no background job ", id));
  job->stop = true;
  // RunSubprocess sees the flag within 20 ms, then SIGTERM, SIGKILL after its grace.
  WaitEnded(id, std::chrono::seconds(10));
  return TakeReport(*job);
}

bool BackgroundJobs::WaitEnded(int id, std::chrono::milliseconds timeout) {
  std::shared_ptr<Job> job = Find(id);
  if (job == nullptr) return false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock l(&job->mu);
  while (!job->done) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    job->ended.WaitWithTimeout(&job->mu, absl::FromChrono(left));
  }
  return true;
}

std::string BackgroundJobs::List() {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    MutexLock l(&mu_);
    for (auto& [id, j] : jobs_) jobs.push_back(j);
  }
  std::string out;
  for (const auto& j : jobs) {
    MutexLock l(&j->mu);
    absl::StrAppend(&out, "job ", j->id,
                    j->done ? absl::StrCat(" ended (", j->ending, ")") : std::string(" running"),
                    ": ", j->command, "\n");
  }
  return out;
}

int BackgroundJobs::Running() const {
  MutexLock l(&mu_);
  return RunningLocked();
}

int BackgroundJobs::RunningLocked() const {
  int running = 0;
  for (auto& [id, j] : jobs_) {
    MutexLock jl(&j->mu);
    if (!j->done) ++running;
  }
  return running;
}

void BackgroundJobs::KillAll() {
  MutexLock killing(&kill_mu_);  // one joins, a second caller waits
  std::map<int, std::shared_ptr<Job>> jobs;
  {
    MutexLock l(&mu_);
    closed_ = true;
    jobs = jobs_;
  }
  for (auto& [id, j] : jobs) j->stop = true;
  for (auto& [id, j] : jobs) {
    if (j->thread.joinable()) j->thread.join();
  }
}

}  // namespace agent::daemon::tools
