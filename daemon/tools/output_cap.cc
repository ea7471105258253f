#include "daemon/tools/output_cap.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {

OutputCap::OutputCap(size_t head_bytes, size_t tail_bytes)
    : head_max_(head_bytes), tail_max_(tail_bytes) {}

void OutputCap::Append(std::string_view data) {
  total_ += data.size();
  if (head_.size() < head_max_) {
    size_t take = std::min(head_max_ - head_.size(), data.size());
    head_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  if (data.empty()) return;
  if (tail_max_ == 0) return;
  if (data.size() >= tail_max_) {
    tail_.assign(data.substr(data.size() - tail_max_));
    return;
  }
  tail_.append(data);
  // Trimming only when the buffer doubles keeps Append amortised O(size of data).
  if (tail_.size() > 2 * tail_max_) tail_.erase(0, tail_.size() - tail_max_);
}

OutputCap::Cut OutputCap::Compute() const {
  std::string_view head = head_;
  std::string_view tail = tail_;
  if (tail.size() > tail_max_) tail.remove_prefix(tail.size() - tail_max_);
  uint64_t omitted = total_ - head.size() - tail.size();
  if (omitted == 0) return {head, tail, 0};
  // Something was dropped between head and tail: cut both at character boundaries.
  std::string_view head_cut = head.substr(0, Utf8CompleteLength(head));
  std::string_view tail_cut = tail.substr(Utf8CeilBoundary(tail, 0));
  omitted += (head.size() - head_cut.size()) + (tail.size() - tail_cut.size());
  return {head_cut, tail_cut, omitted};
}

uint64_t OutputCap::omitted_bytes() const { return Compute().omitted; }

std::string OutputCap::Render() const {
  Cut cut = Compute();
  if (cut.omitted == 0) return absl::StrCat(AbslView(cut.head), AbslView(cut.tail));
  return absl::StrCat(AbslView(cut.head), "\n… ", cut.omitted, " bytes omitted …\n",
                      AbslView(cut.tail));
}

}  // namespace agent::daemon::tools
