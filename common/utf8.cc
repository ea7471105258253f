#include "common/utf8.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace agent {
namespace {

enum class Kind { kValid, kInvalid, kIncomplete };

// One step of decoding at the start of [p, p + n), n > 0. kValid: a whole character of `len`
// bytes. kInvalid: `len` bytes (>= 1, the maximal subpart) to replace with one U+FFFD; the
// byte after them starts the next step. kIncomplete: the `len` = n bytes are a well-formed
// prefix that the input ends inside.
struct Step {
  Kind kind;
  size_t len;
};

Step Classify(const unsigned char* p, size_t n) {
  const unsigned char c = p[0];
  if (c < 0x80) return {Kind::kValid, 1};
  // Table 3-7 of the Unicode standard: the lead byte fixes the length and the range of the
  // second byte (which is what excludes overlongs, surrogates and values past U+10FFFF).
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {Kind::kInvalid, 1};  // 80..C1 and F5..FF never start a character
  }
  for (size_t i = 1; i < need; ++i) {
    if (i >= n) return {Kind::kIncomplete, i};
    const unsigned char b = p[i];
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return {Kind::kInvalid, i};
  }
  return {Kind::kValid, need};
}

// Length of the longest prefix of `s` made of whole valid characters.
size_t ValidPrefixLength(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // ASCII runs, 8 bytes at a time: most tool output is ASCII.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) != 0) break;
      i += 8;
    }
    if (i >= n) break;
    Step st = Classify(p + i, n - i);
    if (st.kind != Kind::kValid) break;
    i += st.len;
  }
  return i;
}

// Appends `s` repaired to `out`. When `hold_tail` is set and `s` ends inside a character,
// those bytes are not appended; returns how many were held (0..3).
size_t AppendRepaired(std::string_view s, std::string* out, bool hold_tail) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    const size_t valid = ValidPrefixLength(s.substr(i));
    out->append(s.data() + i, valid);
    i += valid;
    if (i >= s.size()) break;
    Step st = Classify(p + i, s.size() - i);
    if (st.kind == Kind::kIncomplete && hold_tail) return st.len;
    out->append(kReplacementChar);
    i += st.len;
  }
  return 0;
}

}  // namespace

bool IsValidUtf8(std::string_view s) { return ValidPrefixLength(s) == s.size(); }

std::string ToValidUtf8(std::string_view s) {
  const size_t valid = ValidPrefixLength(s);
  if (valid == s.size()) return std::string(s);
  std::string out;
  out.reserve(s.size() + s.size() / 2);
  out.append(s.data(), valid);
  AppendRepaired(s.substr(valid), &out, /*hold_tail=*/false);
  return out;
}

void MakeValidUtf8(std::string* s) {
  if (IsValidUtf8(*s)) return;
  *s = ToValidUtf8(*s);
}

Utf8Unit Utf8UnitAt(std::string_view s, size_t i) {
  // A prefix the input ends inside is, at the end of the text, one maximal subpart.
  const Step st = Classify(reinterpret_cast<const unsigned char*>(s.data()) + i, s.size() - i);
  return {st.len, st.kind == Kind::kValid};
}

std::string Utf8Decoder::Feed(std::string_view chunk) {
  std::string out;
  if (pending_len_ > 0) {
    // Complete (or refute) the held-back character with the first bytes of this chunk.
    char joined[4];
    std::memcpy(joined, pending_, pending_len_);
    const size_t borrow = std::min(chunk.size(), sizeof joined - pending_len_);
    std::memcpy(joined + pending_len_, chunk.data(), borrow);
    const size_t joined_len = pending_len_ + borrow;
    Step st = Classify(reinterpret_cast<const unsigned char*>(joined), joined_len);
    if (st.kind == Kind::kIncomplete) {
      std::memcpy(pending_, joined, joined_len);  // still short: the chunk was 1-2 bytes
      pending_len_ = joined_len;
      return out;
    }
    if (st.kind == Kind::kValid) {
      out.append(joined, st.len);
    } else {
      out.append(kReplacementChar);
    }
    // The held bytes are a well-formed prefix, so the step ends at or past their end.
    chunk.remove_prefix(st.len - pending_len_);
    pending_len_ = 0;
  }
  const size_t held = AppendRepaired(chunk, &out, /*hold_tail=*/true);
  std::memcpy(pending_, chunk.data() + chunk.size() - held, held);
  pending_len_ = held;
  return out;
}

std::string Utf8Decoder::Finish() {
  if (pending_len_ == 0) return {};
  pending_len_ = 0;
  return std::string(kReplacementChar);
}

}  // namespace agent
