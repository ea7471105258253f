#include "client/link/proxy_splice.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace agent::client {
namespace {

struct Direction {
  int in, out;
  std::string buf;  // bytes read, not yet written from `off` on
  size_t off = 0;
  bool ended = false;  // the input ended, or the output refused
  uint64_t moved = 0;

  size_t Pending() const { return buf.size() - off; }
  bool WantsRead() const { return !ended && buf.size() < kSpliceBuffer; }
};

void SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void ReadSome(Direction& d) {
  char chunk[16384];
  size_t room = std::min(sizeof chunk, kSpliceBuffer - d.buf.size());
  ssize_t n = ::read(d.in, chunk, room);
  if (n > 0) {
    d.buf.append(chunk, static_cast<size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    d.ended = true;
  }
}

// False when the output refused (closed reader, reset): this direction and the splice end.
bool WriteSome(Direction& d) {
  ssize_t n = ::write(d.out, d.buf.data() + d.off, d.Pending());
  if (n >= 0) {
    d.off += static_cast<size_t>(n);
    d.moved += static_cast<uint64_t>(n);
    if (d.off == d.buf.size()) {  // all out: the buffer has room again
      d.buf.clear();
      d.off = 0;
    }
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

// What is still buffered goes out, bounded by `drain_ms` in all.
void Drain(Direction* dirs, int drain_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(drain_ms);
  for (int i = 0; i < 2; ++i) {
    Direction& d = dirs[i];
    while (d.Pending() > 0) {  // bounded by the deadline
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      pollfd p{d.out, POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
      if (!WriteSome(d)) break;
    }
  }
}

}  // namespace

absl::Status Splice(int a_in, int a_out, int b_in, int b_out, std::string first_to_b,
                    SpliceStats* stats, int drain_ms) {
  for (int fd : {a_in, a_out, b_in, b_out}) SetNonBlocking(fd);
  Direction dirs[2] = {{a_in, b_out, std::move(first_to_b)}, {b_in, a_out, ""}};
  SpliceStats local;
  SpliceStats& st = stats != nullptr ? *stats : local;
  absl::Status result = absl::OkStatus();
  // Bounded by the peers: each pass waits in poll until a byte can move or a side closes.
  while (!(dirs[0].ended || dirs[1].ended)) {
    pollfd fds[4];
    int slot[4];  // which direction, and whether the entry is its input (even) or output (odd)
    nfds_t n = 0;
    for (int i = 0; i < 2; ++i) {
      if (dirs[i].WantsRead()) {
        fds[n] = {dirs[i].in, POLLIN, 0};
        slot[n++] = 2 * i;
      }
      if (dirs[i].Pending() > 0) {
        fds[n] = {dirs[i].out, POLLOUT, 0};
        slot[n++] = 2 * i + 1;
      }
    }
    int r = ::poll(fds, n, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      result = absl::InternalError("poll failed");
      break;
    }
    ++st.wakeups;
    for (nfds_t k = 0; k < n; ++k) {
      if (fds[k].revents == 0) continue;
      Direction& d = dirs[slot[k] / 2];
      if (slot[k] % 2 == 0) {
        ReadSome(d);
      } else if (!WriteSome(d)) {
        d.ended = true;
        d.buf.clear();
        d.off = 0;
      }
    }
  }
  Drain(dirs, drain_ms);
  st.a_to_b = dirs[0].moved;
  st.b_to_a = dirs[1].moved;
  return result;
}

}  // namespace agent::client
