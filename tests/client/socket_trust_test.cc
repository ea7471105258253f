#include "client/link/socket_trust.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(SocketPeerTest, PeerOfOurOwnUidIsAccepted) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_TRUE(CheckSocketPeer(fds[0], "pair").ok());
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(SocketPeerTest, NotASocketIsRefused) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(CheckSocketPeer(fds[0], "pipe").code(), absl::StatusCode::kPermissionDenied);
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace agent::client
