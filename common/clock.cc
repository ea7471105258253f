#include "common/clock.h"

#include <chrono>

namespace agent {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  absl::Time Monotonic() const override {
    return absl::UnixEpoch() +
           absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
  }
};

}  // namespace

const Clock* Clock::Real() {
  static const RealClock* clock = new RealClock;
  return clock;
}

}  // namespace agent
