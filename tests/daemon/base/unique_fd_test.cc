// UniqueFd: ownership of a descriptor, seen from the other end of a pipe (a write end that
// is closed gives the read end EOF) and through fcntl (a closed descriptor is EBADF).
#include "daemon/base/unique_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// Whether `fd` is closed: fcntl says EBADF.
bool IsClosed(int fd) { return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF; }

// A pipe whose read end the test keeps and whose write end it hands out.
class Pipe {
 public:
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    read_ = fds[0];
    write_ = fds[1];
  }
  ~Pipe() {
    ::close(read_);
    if (write_ >= 0) ::close(write_);
  }
  int read_end() const { return read_; }
  // The write end, for a UniqueFd to own from now on.
  int TakeWriteEnd() { return std::exchange(write_, -1); }
  // Whether the read end sees EOF: every write end is closed.
  bool WriterClosed() const {
    char c;
    return ::read(read_, &c, 1) == 0;
  }

 private:
  int read_ = -1;
  int write_ = -1;
};

TEST(UniqueFdTest, DefaultHoldsNothing) {
  UniqueFd fd;
  EXPECT_EQ(fd.get(), -1);
  EXPECT_FALSE(fd.open());
  fd.Close();  // closing nothing is harmless
  EXPECT_EQ(fd.Release(), -1);
  EXPECT_FALSE(fd.open());
}

TEST(UniqueFdTest, ClosesTheDescriptorWhenItGoes) {
  Pipe pipe;
  int raw = -1;
  {
    UniqueFd fd(pipe.TakeWriteEnd());
    raw = fd.get();
    EXPECT_TRUE(fd.open());
    EXPECT_TRUE(IsOpen(raw));
    EXPECT_FALSE(pipe.WriterClosed());  // open, merely empty (EAGAIN)
  }
  EXPECT_TRUE(pipe.WriterClosed());
  EXPECT_TRUE(IsClosed(raw));
}

TEST(UniqueFdTest, CloseClosesOnceAndForgets) {
  Pipe pipe;
  UniqueFd fd(pipe.TakeWriteEnd());
  fd.Close();
  EXPECT_FALSE(fd.open());
  EXPECT_EQ(fd.get(), -1);
  EXPECT_TRUE(pipe.WriterClosed());
  fd.Close();  // a second Close does not close a number another open may have reused
}

TEST(UniqueFdTest, MovingHandsOverOwnership) {
  Pipe pipe;
  UniqueFd from(pipe.TakeWriteEnd());
  const int raw = from.get();
  UniqueFd to(std::move(from));
  EXPECT_EQ(to.get(), raw);
  EXPECT_FALSE(from.open());  // NOLINT(bugprone-use-after-move): moved-from is documented empty
  from.Close();
  EXPECT_FALSE(pipe.WriterClosed());  // the moved-from one closed nothing
  EXPECT_TRUE(IsOpen(raw));
  to.Close();
  EXPECT_TRUE(pipe.WriterClosed());
}

TEST(UniqueFdTest, MoveAssignmentClosesWhatTheTargetHeld) {
  Pipe old_pipe, new_pipe;
  UniqueFd target(old_pipe.TakeWriteEnd());
  UniqueFd source(new_pipe.TakeWriteEnd());
  const int raw = source.get();
  target = std::move(source);
  EXPECT_TRUE(old_pipe.WriterClosed());
  EXPECT_FALSE(new_pipe.WriterClosed());
  EXPECT_EQ(target.get(), raw);
  EXPECT_FALSE(source.open());  // NOLINT(bugprone-use-after-move)
}

TEST(UniqueFdTest, SelfMoveAssignmentKeepsTheDescriptor) {
  Pipe pipe;
  UniqueFd fd(pipe.TakeWriteEnd());
  const int raw = fd.get();
  UniqueFd& alias = fd;
  fd = std::move(alias);
  EXPECT_EQ(fd.get(), raw);
  EXPECT_FALSE(pipe.WriterClosed());
}

TEST(UniqueFdTest, ResetClosesTheOldAndOwnsTheNew) {
  Pipe first, second;
  UniqueFd fd(first.TakeWriteEnd());
  const int raw = second.TakeWriteEnd();
  fd.Reset(raw);
  EXPECT_TRUE(first.WriterClosed());
  EXPECT_EQ(fd.get(), raw);
  EXPECT_FALSE(second.WriterClosed());
  fd.Reset();
  EXPECT_FALSE(fd.open());
  EXPECT_TRUE(second.WriterClosed());
}

TEST(UniqueFdTest, ReleaseGivesTheDescriptorUpUnclosed) {
  Pipe pipe;
  int raw = -1;
  {
    UniqueFd fd(pipe.TakeWriteEnd());
    const int held = fd.get();
    raw = fd.Release();
    EXPECT_EQ(raw, held);
    EXPECT_FALSE(fd.open());
  }
  EXPECT_TRUE(IsOpen(raw));
  EXPECT_FALSE(pipe.WriterClosed());
  ::close(raw);  // the caller's now
  EXPECT_TRUE(pipe.WriterClosed());
}

}  // namespace
}  // namespace agent::daemon
