// EventRecorder: a Subscriber that keeps a session's events, for tests that wait (bounded) on
// a condition over them instead of sleeping. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/session/event_log.h"

namespace agent::testing {

class EventRecorder : public daemon::Subscriber {
 public:
  void Deliver(const daemon::EventPtr& e) override {
    agent::MutexLock l(&mu_);
    events_.push_back(e);
    cv_.SignalAll();
  }
  // Waits (bounded) until the `n`-th event for which `pred` holds; returns it. `pred` must
  // be free of side effects: the mutex may evaluate the wait condition several times.
  daemon::EventPtr WaitFor(std::function<bool(const agent::v1::Event&)> pred, int n = 1,
                           absl::Duration timeout = absl::Seconds(20)) {
    agent::MutexLock l(&mu_);
    absl::Time deadline = absl::Now() + timeout;
    // Each wake looks at the new events only: a long turn's wait stays linear, not quadratic.
    size_t seen = 0;
    int matches = 0;
    for (;;) {
      for (; seen < events_.size(); ++seen) {
        if (pred(*events_[seen]) && ++matches == n) return events_[seen];
      }
      if (absl::Now() >= deadline) return nullptr;
      cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
  }
  daemon::EventPtr WaitTurnEnded(int n = 1) {
    return WaitFor([](const agent::v1::Event& e) { return e.has_turn_ended(); }, n);
  }
  std::vector<daemon::EventPtr> events() {
    agent::MutexLock l(&mu_);
    return events_;
  }
  // Subscriber::End: the stream would end here with `status`.
  void End(const absl::Status& status) override {
    agent::MutexLock l(&mu_);
    ended_ = true;
    end_status_ = status;
    cv_.SignalAll();
  }
  // Waits (bounded) until End was called; false on timeout.
  bool WaitEnded(absl::Duration timeout = absl::Seconds(20)) {
    agent::MutexLock l(&mu_);
    absl::Time deadline = absl::Now() + timeout;
    while (!ended_ && absl::Now() < deadline) cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    return ended_;
  }
  absl::Status end_status() {
    agent::MutexLock l(&mu_);
    return end_status_;
  }

 private:
  agent::Mutex mu_;
  std::vector<daemon::EventPtr> events_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status end_status_ ABSL_GUARDED_BY(mu_);
  agent::CondVar cv_;
};

}  // namespace agent::testing
