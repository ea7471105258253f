// The proxy's byte pump (proxy_splice.h) between two socketpairs, as stdio and the daemon's
// socket are.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "client/link/proxy_splice.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void Close(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
};

bool WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads `n` bytes (or up to EOF).
std::string ReadN(int fd, size_t n) {
  std::string out;
  char buf[65536];
  while (out.size() < n) {
    ssize_t got = ::read(fd, buf, std::min(sizeof buf, n - out.size()));
    if (got <= 0) break;
    out.append(buf, static_cast<size_t>(got));
  }
  return out;
}

class SpliceTest : public ::testing::Test {
 protected:
  void SetUp() override { ::signal(SIGPIPE, SIG_IGN); }
  Pair client_;  // [0] the client's end, [1] the proxy's stdio
  Pair daemon_;  // [0] the proxy's socket, [1] the daemon's end
};

TEST_F(SpliceTest, BytesGoBothWaysAndTheFirstBytesLeadThenEofEnds) {
  SpliceStats stats;
  absl::Status result;
  std::thread pump([&] {
    result = Splice(client_.fd[1], client_.fd[1], daemon_.fd[0], daemon_.fd[0], "early:", &stats);
  });
  ASSERT_TRUE(WriteAll(client_.fd[0], "hello daemon"));
  EXPECT_EQ(ReadN(daemon_.fd[1], 18), "early:hello daemon");
  ASSERT_TRUE(WriteAll(daemon_.fd[1], "hello client"));
  EXPECT_EQ(ReadN(client_.fd[0], 12), "hello client");
  client_.Close(0);  // the client goes away: the proxy ends
  pump.join();
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(stats.a_to_b, 18u);
  EXPECT_EQ(stats.b_to_a, 12u);
}

TEST_F(SpliceTest, ALargeTransferThroughBoundedBuffersArrivesWhole) {
  std::string big(4 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 4096);
  SpliceStats stats;
  std::thread pump([&] {
    (void)Splice(client_.fd[1], client_.fd[1], daemon_.fd[0], daemon_.fd[0], "", &stats);
  });
  std::thread writer([&] {
    WriteAll(daemon_.fd[1], big);
    ::shutdown(daemon_.fd[1], SHUT_WR);  // the daemon closes after its last bytes
  });
  std::string got = ReadN(client_.fd[0], big.size());
  writer.join();
  pump.join();
  EXPECT_EQ(got.size(), big.size());
  EXPECT_TRUE(got == big);
  EXPECT_EQ(stats.b_to_a, big.size());
}

TEST_F(SpliceTest, WaitsWithoutSpinningWhileNothingMoves) {
  SpliceStats stats;
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  std::thread pump([&] {
    (void)Splice(client_.fd[1], client_.fd[1], daemon_.fd[0], daemon_.fd[0], "", &stats);
  });
  // Idle for a while: a busy loop would wake thousands of times and burn the CPU time.
  pollfd none{-1, 0, 0};
  ::poll(&none, 1, 300);
  client_.Close(0);
  pump.join();
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LE(stats.wakeups, 2u);
  long cpu_us = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) * 1000000L +
                (after.ru_utime.tv_usec - before.ru_utime.tv_usec) +
                (after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1000000L +
                (after.ru_stime.tv_usec - before.ru_stime.tv_usec);
  EXPECT_LT(cpu_us, 100000);
}

TEST_F(SpliceTest, TheDaemonClosingEndsItAfterItsLastBytes) {
  absl::Status result;
  std::thread pump(
      [&] { result = Splice(client_.fd[1], client_.fd[1], daemon_.fd[0], daemon_.fd[0]); });
  ASSERT_TRUE(WriteAll(daemon_.fd[1], "bye"));
  daemon_.Close(1);
  EXPECT_EQ(ReadN(client_.fd[0], 3), "bye");
  pump.join();  // returns although the client side is still open
  EXPECT_TRUE(result.ok());
}

}  // namespace
}  // namespace agent::client
