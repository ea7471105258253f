#include "daemon/service/worker_pool.h"

#include <atomic>

#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

TEST(WorkerPoolTest, StopRunsWhatWasQueuedThenRefuses) {
  std::atomic<int> ran{0};
  WorkerPool pool(2);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.Submit([&] { ++ran; }));
  pool.Stop();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_FALSE(pool.Submit([&] { ++ran; }));
  pool.Stop();  // idempotent
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
}  // namespace agent::daemon
