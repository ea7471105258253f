#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// A UTF-8 sequence is at most 4 bytes, so never look further than 3 bytes for its start.
constexpr size_t kMaxBackoff = 3;

}  // namespace

size_t Utf8FloorBoundary(std::string_view s, size_t pos) {
  if (pos >= s.size()) return s.size();
  size_t p = pos;
  while (p > 0 && pos - p < kMaxBackoff && IsContinuation(s[p])) --p;
  return IsContinuation(s[p]) ? pos : p;  // not UTF-8 at all: cut where asked
}

size_t Utf8CeilBoundary(std::string_view s, size_t pos) {
  if (pos >= s.size()) return s.size();
  size_t p = pos;
  while (p < s.size() && p - pos < kMaxBackoff && IsContinuation(s[p])) ++p;
  return p < s.size() && IsContinuation(s[p]) ? pos : p;
}

size_t Utf8CompleteLength(std::string_view s) {
  for (size_t back = 1; back <= 4 && back <= s.size(); ++back) {
    unsigned char c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = c < 0x80             ? 1
                  : (c & 0xE0) == 0xC0 ? 2
                  : (c & 0xF0) == 0xE0 ? 3
                  : (c & 0xF8) == 0xF0 ? 4
                                       : 1;
    return back >= need ? s.size() : s.size() - back;
  }
  return s.size();  // no lead byte in reach: not UTF-8, leave it alone
}

std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  return s.substr(0, Utf8FloorBoundary(s, max_bytes));
}

}  // namespace agent::daemon::tools
