// Clock: where code that stamps times reads "now", so tests can set the time.
// Thread-safe.
#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace agent {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  int64_t NowMs() const { return absl::ToUnixMillis(Now()); }

  // The system clock; lives for the whole program.
  static const Clock* Real();
};

}  // namespace agent
