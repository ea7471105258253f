#include "daemon/sandbox/relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace agent::daemon::sandbox {
namespace {

// Bytes a pipe may hold (F_SETPIPE_SZ; 1 MiB is the default pipe-max-size): fewer calls a MB.
constexpr int kPipeBytes = 1 << 20;

// One direction: a pipe between the sockets. Moves what `from` has now; false at its end.
struct Direction {
  int from;
  int to;
  int pipe[2] = {-1, -1};
  size_t chunk = 1 << 16;  // what the pipe holds
  bool open = true;

  bool Move() {
    const ssize_t in =
        ::splice(from, nullptr, pipe[1], nullptr, chunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (in < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (in <= 0) return false;
    for (ssize_t left = in; left > 0;) {
      const ssize_t out =
          ::splice(pipe[0], nullptr, to, nullptr, static_cast<size_t>(left), SPLICE_F_MOVE);
      if (out < 0 && errno == EINTR) continue;
      if (out <= 0) return false;
      left -= out;
    }
    return true;
  }
};

}  // namespace

void Relay(int a, int b, int stop_fd) {
  Direction dirs[2] = {{a, b}, {b, a}};
  for (Direction& d : dirs) {
    if (::pipe2(d.pipe, O_CLOEXEC) != 0) {
      d.open = false;
      continue;
    }
    if (const int size = ::fcntl(d.pipe[1], F_SETPIPE_SZ, kPipeBytes); size > 0) {
      d.chunk = static_cast<size_t>(size);
    }
  }
  while (dirs[0].open || dirs[1].open) {
    // A direction that ended is not polled at all: its hang-up would wake poll at once, ever.
    pollfd p[3] = {{dirs[0].open ? a : -1, POLLIN, 0},
                   {dirs[1].open ? b : -1, POLLIN, 0},
                   {stop_fd, POLLIN, 0}};
    if (::poll(p, stop_fd >= 0 ? 3 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (stop_fd >= 0 && p[2].revents != 0) break;
    for (int i = 0; i < 2; ++i) {
      if (p[i].revents == 0 || !dirs[i].open) continue;
      if (!dirs[i].Move()) {
        dirs[i].open = false;
        ::shutdown(dirs[i].to, SHUT_WR);
      }
    }
  }
  for (Direction& d : dirs) {
    if (d.pipe[0] >= 0) ::close(d.pipe[0]);
    if (d.pipe[1] >= 0) ::close(d.pipe[1]);
  }
}

}  // namespace agent::daemon::sandbox
