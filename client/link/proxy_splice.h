// The byte pump of `agent proxy`: stdin to the daemon's socket and the socket to stdout, until
// either side closes. One poll loop, no busy waiting: a direction reads only while its buffer
// (kSpliceBuffer bytes at most) has room and writes only what it holds, so a slow reader
// slows its writer instead of growing memory. Sets the fds non-blocking. The caller ignores
// SIGPIPE (a closed reader is an end, reported by write). Thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace agent::client {

inline constexpr size_t kSpliceBuffer = 64 * 1024;

struct SpliceStats {
  uint64_t wakeups = 0;  // poll returns: bounded by the bytes moved, not by time
  uint64_t a_to_b = 0;   // bytes
  uint64_t b_to_a = 0;
};

// Copies a_in -> b_out and b_in -> a_out (`first_to_b` goes to b_out before anything read).
// When an input ends (EOF, or an error such as a reset) or an output refuses bytes, what is
// still buffered for the other side is written within `drain_ms`, and Splice returns OK: a
// closed side is the normal end. Internal only for a failing poll.
absl::Status Splice(int a_in, int a_out, int b_in, int b_out, std::string first_to_b = "",
                    SpliceStats* stats = nullptr, int drain_ms = 2000);

}  // namespace agent::client
