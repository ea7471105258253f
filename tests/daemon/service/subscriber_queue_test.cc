#include "daemon/service/subscriber_queue.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

EventPtr Delta(uint64_t seq, const std::string& text) {
  auto e = std::make_shared<agent::v1::Event>();
  e->set_seq(seq);
  e->mutable_text_delta()->set_text(text);
  return e;
}

EventPtr Other(uint64_t seq) {
  auto e = std::make_shared<agent::v1::Event>();
  e->set_seq(seq);
  e->mutable_usage()->set_prompt_tokens(1);
  return e;
}

TEST(SubscriberQueue, IdleQueueWritesAtOnceThenQueuesWhileWriting) {
  SubscriberQueue q(100, 1 << 20);
  EXPECT_EQ(q.Push(Other(1))->seq(), 1u);
  EXPECT_TRUE(q.writing());
  EXPECT_EQ(q.Push(Other(2)), nullptr);
  EXPECT_EQ(q.Push(Other(3)), nullptr);
  auto n = q.WriteDone();
  ASSERT_TRUE(n.write);
  EXPECT_EQ(n.write->seq(), 2u);
  EXPECT_TRUE(q.writing());
  EXPECT_EQ(q.WriteDone().write->seq(), 3u);
  auto last = q.WriteDone();
  EXPECT_FALSE(last.write);
  EXPECT_FALSE(q.writing());
  EXPECT_EQ(q.bytes(), 0u);
}

TEST(SubscriberQueue, LaggingClientGetsTextDeltasMerged) {
  SubscriberQueue q(100, 1 << 20, /*coalesce_after=*/2);
  q.Push(Other(1));  // in flight
  q.Push(Delta(2, "a"));
  q.Push(Delta(3, "b"));
  q.Push(Delta(4, "c"));
  q.Push(Delta(5, "d"));
  EXPECT_EQ(q.size(), 2u);
  q.WriteDone();  // writes "a"
  auto merged = q.WriteDone().write;
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->text_delta().text(), "bcd");
  EXPECT_EQ(merged->seq(), 5u);
  EXPECT_FALSE(q.WriteDone().write);
  EXPECT_EQ(q.bytes(), 0u);  // the accounting survives merging
}

TEST(SubscriberQueue, OverflowDropsTheBacklogAndAsksForOneSnapshot) {
  SubscriberQueue q(3, 1 << 20, /*coalesce_after=*/100);
  q.Push(Other(1));
  for (uint64_t s = 2; s <= 4; ++s) q.Push(Other(s));
  EXPECT_EQ(q.size(), 3u);
  q.Push(Other(5));  // over the bound
  EXPECT_TRUE(q.lagged());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.Push(Other(6)), nullptr);  // dropped: the snapshot covers it
  auto n = q.WriteDone();
  EXPECT_TRUE(n.resync);
  EXPECT_FALSE(n.write);
  // The snapshot goes straight out, then live events flow again.
  EXPECT_TRUE(q.Push(Other(7)));
  EXPECT_EQ(q.Push(Other(8)), nullptr);
  EXPECT_EQ(q.WriteDone().write->seq(), 8u);
  EXPECT_EQ(q.overflows(), 1u);
}

TEST(SubscriberQueue, ByteBoundHoldsForAClientThatNeverReads) {
  SubscriberQueue q(1 << 20, 64 * 1024, /*coalesce_after=*/100);
  q.Push(Other(0));  // in flight forever
  std::string chunk(1000, 'x');
  for (uint64_t s = 1; s <= 10000; ++s) {
    q.Push(Delta(s, chunk));
    ASSERT_LE(q.bytes(), 64u * 1024);
  }
  EXPECT_GT(q.overflows(), 0u);
}

TEST(SubscriberQueue, AHugeFirstEventIsStillWritten) {
  SubscriberQueue q(10, 100);
  EXPECT_TRUE(q.Push(Delta(1, std::string(1000, 'x'))));
}

}  // namespace
}  // namespace agent::daemon
