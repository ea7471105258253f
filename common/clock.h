// Clock: where code that stamps times reads "now", so tests can set the time.
// Thread-safe.
#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace agent {

class Clock {
 public:
  virtual ~Clock() = default;
  // The wall clock: times that are shown or saved.
  virtual absl::Time Now() const = 0;
  int64_t NowMs() const { return absl::ToUnixMillis(Now()); }
  // A clock that never steps (the real one counts from an arbitrary start): for durations, such
  // as how long a session has been idle, which a wall clock set back by an hour would stretch.
  // A fake clock's is its Now().
  virtual absl::Time Monotonic() const { return Now(); }

  // The system clock; lives for the whole program.
  static const Clock* Real();
};

// Clock::Real()->Monotonic(): for timeouts and waits measured inside one process.
inline absl::Time MonotonicNow() { return Clock::Real()->Monotonic(); }

}  // namespace agent
