// UTF-8 repair for text that arrives from a model server. The transport turns bytes into text
// at one place, SseParser's dispatch of a complete event (sse_parser.h), with
// ReplaceInvalidUtf8; error messages pass through OneLineTruncated (error_text.h), which uses
// the same rule. Everything downstream (the JSON parser, the sink, the reply) then only ever
// sees valid UTF-8.
//
// The rule is the Unicode "maximal subpart" practice, which WHATWG's UTF-8 decoder (the one
// the SSE spec names) and Python's errors="replace" also follow: every maximal prefix of a
// well-formed sequence that is cut short, and every byte that cannot start one (0x80-0xC1,
// 0xF5-0xFF), becomes one U+FFFD. Overlong forms, surrogates (ED A0..BF) and code points above
// U+10FFFF are ill-formed.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agent::daemon::llm {

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 when the bytes there
// are not one; then *bad_len is the length of the maximal subpart to replace (at least 1).
// REQUIRES: i < s.size().
size_t Utf8SequenceAt(std::string_view s, size_t i, size_t* bad_len);

bool IsValidUtf8(std::string_view s);

// `s` with each ill-formed part replaced by U+FFFD. Returns `s` unchanged (one copy) when it
// is already valid.
std::string ReplaceInvalidUtf8(std::string_view s);

// Replaces in place; does nothing (and allocates nothing) when `*s` is valid.
void RepairUtf8(std::string* s);

}  // namespace agent::daemon::llm
