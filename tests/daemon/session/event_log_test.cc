#include "daemon/session/event_log.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fakes/fake_clock.h"

namespace agent::daemon {
namespace {

constexpr char kEpoch[] = "epoch-a";

agent::v1::Event Output(size_t bytes) {
  agent::v1::Event e;
  e.mutable_tool_output()->set_call_id("c");
  e.mutable_tool_output()->set_chunk(std::string(bytes, 'x'));
  return e;
}

// Seqs of what Since returns; {-1} for nullopt (a snapshot).
std::vector<int64_t> Seqs(const EventLog& log, uint64_t after, const std::string& epoch = kEpoch) {
  auto got = log.Since(epoch, after);
  if (!got.has_value()) return {-1};
  std::vector<int64_t> out;
  for (const EventPtr& e : *got) out.push_back(static_cast<int64_t>(e->seq()));
  return out;
}

const std::vector<int64_t> kSnapshot = {-1};

TEST(EventLog, AppendStampsSeqEpochAndTime) {
  EventLog log(kEpoch, 10);
  EventPtr e = log.Append(Output(1));
  EXPECT_EQ(e->seq(), 1u);
  EXPECT_EQ(e->epoch(), kEpoch);
  EXPECT_GT(e->unix_ms(), 0);
  EXPECT_EQ(log.Append(Output(1))->seq(), 2u);
  EXPECT_EQ(log.last_seq(), 2u);
}

TEST(EventLog, TimeComesFromTheGivenClock) {
  testing::FakeClock clock(absl::FromUnixMillis(1234567));
  EventLog log(kEpoch, 10, kEventRingMaxBytes, &clock);
  EXPECT_EQ(log.Append(Output(1))->unix_ms(), 1234567);
  clock.Advance(absl::Milliseconds(5));
  EXPECT_EQ(log.Append(Output(1))->unix_ms(), 1234572);
}

TEST(EventLog, ResumeAfterTheLastEventIsEmptyNotASnapshot) {
  EventLog log(kEpoch, 10);
  for (int i = 0; i < 3; ++i) log.Append(Output(1));
  EXPECT_EQ(Seqs(log, 3), std::vector<int64_t>{});
  EXPECT_EQ(Seqs(log, 1), (std::vector<int64_t>{2, 3}));
}

TEST(EventLog, SeqZeroFutureSeqAndAnotherEpochGetASnapshot) {
  EventLog log(kEpoch, 10);
  EXPECT_EQ(Seqs(log, 0), kSnapshot);  // nothing appended yet
  for (int i = 0; i < 3; ++i) log.Append(Output(1));
  EXPECT_EQ(Seqs(log, 0), kSnapshot);  // a new client
  EXPECT_EQ(Seqs(log, 4), kSnapshot);  // not issued yet (a seq from before a restart)
  EXPECT_EQ(Seqs(log, 2, "epoch-b"), kSnapshot);
}

TEST(EventLog, EvictedByCountGivesASnapshotOneLaterReplays) {
  EventLog log(kEpoch, 3);
  for (int i = 0; i < 5; ++i) log.Append(Output(1));  // keeps 3, 4, 5
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(Seqs(log, 1), kSnapshot);  // 2 was evicted
  EXPECT_EQ(Seqs(log, 2), (std::vector<int64_t>{3, 4, 5}));
}

TEST(EventLog, EvictedByBytesGivesASnapshotOneLaterReplays) {
  const size_t one = Output(1000).ByteSizeLong() + 20;  // seq, epoch and time add a little
  EventLog log(kEpoch, 4096, 3 * one);
  for (int i = 0; i < 10; ++i) log.Append(Output(1000));
  EXPECT_EQ(log.size(), 3u);
  EXPECT_LE(log.bytes(), 3 * one);
  EXPECT_EQ(Seqs(log, 6), kSnapshot);
  EXPECT_EQ(Seqs(log, 7), (std::vector<int64_t>{8, 9, 10}));
}

TEST(EventLog, BytesAreBoundedWhateverTheCount) {
  EventLog log(kEpoch, 4096, 1 << 20);
  for (int i = 0; i < 200; ++i) log.Append(Output(64 << 10));
  EXPECT_LE(log.bytes(), size_t{1} << 20);
  EXPECT_EQ(log.size(), 15u);  // 16 chunks of 64 KB plus their headers exceed 1 MiB
}

TEST(EventLog, AnEventBiggerThanTheBoundIsKeptAlone) {
  EventLog log(kEpoch, 4096, 1000);
  log.Append(Output(10));
  log.Append(Output(10));
  log.Append(Output(5000));
  EXPECT_EQ(log.size(), 1u);
  EXPECT_GT(log.bytes(), 1000u);
  EXPECT_EQ(Seqs(log, 2), std::vector<int64_t>{3});  // one behind: still replayed
  EXPECT_EQ(Seqs(log, 1), kSnapshot);
  log.Append(Output(10));  // the next event pushes it out
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(Seqs(log, 3), std::vector<int64_t>{4});
  EXPECT_EQ(Seqs(log, 2), kSnapshot);
}

class Collect : public Subscriber {
 public:
  void Deliver(const EventPtr& e) override { seqs.push_back(e->seq()); }
  std::vector<uint64_t> seqs;
};

TEST(EventLog, SubscribersGetEveryEventEvenWhenTheRingDropsIt) {
  EventLog log(kEpoch, 1, 10);
  Collect c;
  log.Subscribe(&c);
  for (int i = 0; i < 3; ++i) log.Append(Output(100));
  log.Unsubscribe(&c);
  log.Append(Output(1));
  EXPECT_EQ(c.seqs, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(log.subscriber_count(), 0u);
}

}  // namespace
}  // namespace agent::daemon
