#include "daemon/llm/stream_utf8.h"

namespace agent::daemon::llm {
namespace {

bool InRange(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

}  // namespace

size_t Utf8SequenceAt(std::string_view s, size_t i, size_t* bad_len) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  // Table 3-7 of the Unicode standard: the allowed range of the second byte depends on the
  // first (this is what excludes overlong forms, surrogates and values above U+10FFFF); later
  // bytes are always 80..BF.
  size_t need = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (InRange(c, 0xC2, 0xDF)) {
    need = 1;
  } else if (c == 0xE0) {
    need = 2;
    lo = 0xA0;
  } else if (InRange(c, 0xE1, 0xEC) || InRange(c, 0xEE, 0xEF)) {
    need = 2;
  } else if (c == 0xED) {
    need = 2;
    hi = 0x9F;
  } else if (c == 0xF0) {
    need = 3;
    lo = 0x90;
  } else if (InRange(c, 0xF1, 0xF3)) {
    need = 3;
  } else if (c == 0xF4) {
    need = 3;
    hi = 0x8F;
  } else {
    *bad_len = 1;  // 80..C1, F5..FF never start a character
    return 0;
  }
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size() || !InRange(static_cast<unsigned char>(s[i + k]), lo, hi)) {
      *bad_len = k;  // the lead byte and the k-1 continuation bytes that fitted
      return 0;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII runs are the common case.
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    const size_t n = Utf8SequenceAt(s, i, &bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t bad = 0;
    const size_t n = Utf8SequenceAt(s, i, &bad);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append(kReplacementChar);
      i += bad;
    }
  }
  return out;
}

void RepairUtf8(std::string* s) {
  if (!IsValidUtf8(*s)) *s = ReplaceInvalidUtf8(*s);
}

}  // namespace agent::daemon::llm
