#include "daemon/service/worker_pool.h"

namespace agent::daemon {

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() { Stop(); }

bool WorkerPool::Submit(std::function<void()> task) {
  agent::MutexLock l(&mu_);
  if (stopping_) return false;
  tasks_.push_back(std::move(task));
  cv_.Signal();
  return true;
}

void WorkerPool::Stop() {
  {
    agent::MutexLock l(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      agent::MutexLock l(&mu_);
      while (tasks_.empty() && !stopping_) cv_.Wait(&mu_);
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace agent::daemon
