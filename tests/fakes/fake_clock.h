// FakeClock: an agent::Clock that tests set and move by hand. Thread-safe: a test thread may
// move it while the code under test reads it on others.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace agent::testing {

class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(start), monotonic_(start) {}

  absl::Time Now() const override {
    MutexLock l(&mu_);
    return now_;
  }
  absl::Time Monotonic() const override {
    MutexLock l(&mu_);
    return monotonic_;
  }
  // Time passes: both clocks move.
  void Set(absl::Time t) {
    MutexLock l(&mu_);
    monotonic_ += t - now_;
    now_ = t;
  }
  void Advance(absl::Duration d) {
    MutexLock l(&mu_);
    now_ += d;
    monotonic_ += d;
  }
  // The wall clock is set (NTP, a person): only it moves.
  void StepWall(absl::Duration d) {
    MutexLock l(&mu_);
    now_ += d;
  }

 private:
  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Time monotonic_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::testing
