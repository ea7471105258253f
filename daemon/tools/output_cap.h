// Bounds what a command's output costs in the transcript: keeps the first and the last bytes
// of a stream and counts what falls between. Memory stays under head + 2 * tail bytes however
// much is appended. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agent::daemon::tools {

class OutputCap {
 public:
  OutputCap(size_t head_bytes, size_t tail_bytes);

  void Append(std::string_view data);

  uint64_t total_bytes() const { return total_; }
  // Bytes Render leaves out (cuts move to UTF-8 character boundaries, so this can be a few
  // bytes more than total - head - tail).
  uint64_t omitted_bytes() const;
  // head, then "\n… N bytes omitted …\n" when something was left out, then tail.
  std::string Render() const;

 private:
  struct Cut {
    std::string_view head;
    std::string_view tail;
    uint64_t omitted;
  };
  Cut Compute() const;

  size_t head_max_;
  size_t tail_max_;
  std::string head_;
  std::string tail_;  // the newest bytes after head_; trimmed to tail_max_ when it doubles
  uint64_t total_ = 0;
};

}  // namespace agent::daemon::tools
