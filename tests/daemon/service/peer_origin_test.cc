#include "daemon/service/peer_origin.h"

#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

TEST(PeerOriginTest, AChildIsADescendantAndAnUnknownPidCountsAsOne) {
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(gate[1]);  // else its own copy of the write end keeps the read below from ending
    char c;
    (void)::read(gate[0], &c, 1);  // lives until the test is done with it
    ::_exit(0);
  }
  EXPECT_TRUE(IsDescendantOf(child, ::getpid()));
  EXPECT_FALSE(IsDescendantOf(::getpid(), child));
  EXPECT_FALSE(IsDescendantOf(::getpid(), ::getpid()));  // itself is not its descendant
  EXPECT_FALSE(IsDescendantOf(::getppid(), ::getpid()));
  EXPECT_TRUE(IsDescendantOf(0, ::getpid()));  // another PID namespace: fail closed
  ::close(gate[1]);
  ::close(gate[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
}

}  // namespace
}  // namespace agent::daemon
