// WorkerPool: a few threads for RPCs that wait (Compact waits for a summary request), so no
// gRPC thread blocks and no detached thread outlives the daemon's shutdown.
// Thread-safe. Stop (or the destructor) runs what is queued, then joins the threads.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace agent::daemon {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false (and `task` not run) once Stop has begun.
  bool Submit(std::function<void()> task) ABSL_LOCKS_EXCLUDED(mu_);
  // Refuses new tasks, finishes the queued ones and joins the threads. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Work() ABSL_LOCKS_EXCLUDED(mu_);

  agent::Mutex mu_;
  agent::CondVar cv_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace agent::daemon
