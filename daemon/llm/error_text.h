// Small text helpers for the provider error messages the transports show to the user: they
// must fit on one line and be short, and must not cut a UTF-8 character in half.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/json.h"

namespace agent::daemon::llm {

// The longest provider message we pass on, in characters (UTF-8 code points).
inline constexpr size_t kMaxErrorMessageChars = 200;

// `text` with runs of whitespace (including newlines) collapsed to one space, trimmed at
// both ends, and cut after `max_chars` code points. The result is valid UTF-8: each ill-formed
// part becomes U+FFFD (common/utf8.h) and counts as one character.
std::string OneLineTruncated(std::string_view text, size_t max_chars = kMaxErrorMessageChars);

// The Status for an error object that arrived inside a stream (OpenAI `{"error":{...}}`,
// vLLM `{"object":"error",...}`, Anthropic `{"type":"error","error":{...}}`), given the
// parsed event JSON (any shape) and the raw event data as a fallback message.
// kUnavailable for transient kinds (server errors, overload, rate limits other than quota,
// numeric codes >= 500 or 429), kInvalidArgument for everything else. The message is the
// provider's own, OneLineTruncated; "An error occurred during streaming" when it has none.
absl::Status InStreamErrorStatus(const Json& event_json, std::string_view raw_data);

// The error for a memory cap hit while reading a reply (kMaxSseEventBytes,
// kMaxReplyBytes): kResourceExhausted "<what> is over the <cap> cap (<cap_name>)", the cap
// written as "8 MiB" when a whole number of MiB, else in bytes. The stream parser and the
// assemblers only ever return kResourceExhausted for a cap, and the transport never retries
// it (failure_policy.h).
absl::Status CapExceededError(std::string_view what, size_t cap, std::string_view cap_name);

}  // namespace agent::daemon::llm
