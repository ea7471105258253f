// Small text helpers the tools share: cutting strings without splitting a UTF-8 character.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace agent::daemon::tools {

// Debian's Abseil has its own string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0), which
// std::string_view does not convert to; absl::StrCat and StrSplit need this.
inline absl::string_view AbslView(std::string_view s) { return {s.data(), s.size()}; }

// The largest index <= pos that does not fall inside a UTF-8 sequence (pos <= s.size()).
size_t Utf8FloorBoundary(std::string_view s, size_t pos);
// The smallest index >= pos that does not fall inside a UTF-8 sequence.
size_t Utf8CeilBoundary(std::string_view s, size_t pos);

// The length of `s` without a multi-byte sequence cut short at its end.
size_t Utf8CompleteLength(std::string_view s);

// `s` cut to at most `max_bytes` at a character boundary.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);

}  // namespace agent::daemon::tools
