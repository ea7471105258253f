#include "common/clock.h"

namespace agent {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

const Clock* Clock::Real() {
  static const RealClock* clock = new RealClock;
  return clock;
}

}  // namespace agent
