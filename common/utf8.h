// UTF-8 validation and repair for text that crosses the API or enters the transcript: proto3
// string fields must hold valid UTF-8 (a peer's parser rejects the whole message otherwise),
// and tool output is whatever bytes a command wrote.
//
// Repair follows the Unicode "maximal subpart" practice (Unicode 15, section 3.9, U+FFFD
// substitution; what Python's errors="replace" and WHATWG decoders do): each maximal prefix of
// a well-formed sequence that is cut short, and each byte that can start none, becomes one
// U+FFFD. Overlong forms, surrogates (ED A0..BF) and code points above U+10FFFF are invalid.
//
// Pure functions; thread-safe. Utf8Decoder is thread-compatible (one per stream).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agent {

// The replacement character U+FFFD in UTF-8.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// True when `s` is well-formed UTF-8 (NUL bytes are valid).
bool IsValidUtf8(std::string_view s);

// `s` with every ill-formed sequence replaced by U+FFFD. Valid input is returned unchanged
// after one validating pass (no per-character rebuilding).
std::string ToValidUtf8(std::string_view s);

// In place: leaves a valid `*s` untouched (no allocation), repairs it otherwise.
void MakeValidUtf8(std::string* s);

// One step of reading `s` from byte i, for callers that walk text character by character
// (e.g. to count or cut characters) and repair as they go: `len` bytes (1 to 4) that are
// either one whole character (`valid`) or the maximal subpart that ToValidUtf8 replaces with
// one U+FFFD. REQUIRES: i < s.size().
struct Utf8Unit {
  size_t len;
  bool valid;
};
Utf8Unit Utf8UnitAt(std::string_view s, size_t i);

// Repairs a byte stream that arrives in chunks which may split characters: a trailing
// sequence that is well-formed so far (at most 3 bytes) is held back until the next chunk
// completes it or Finish ends it. Concatenating every Feed and the Finish yields exactly
// ToValidUtf8 of the concatenated input.
class Utf8Decoder {
 public:
  // Valid UTF-8 for `chunk` plus what was held back; may be empty.
  std::string Feed(std::string_view chunk);
  // The held-back bytes as U+FFFD (the stream ended inside a character), or empty. The
  // decoder is then ready for a new stream.
  std::string Finish();
  // Bytes held back at the moment (0..3).
  size_t pending() const { return pending_len_; }

 private:
  char pending_[3] = {};
  size_t pending_len_ = 0;
};

}  // namespace agent
