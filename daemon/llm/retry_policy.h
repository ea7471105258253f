// Whether and when to retry a failed model request (WIRE.md §6). Pure: the clock and the
// jitter come in as arguments, so every decision is reproducible in tests. Thread-safe.
//
// Retried: 408, 409, 429, 500, 502, 503, 504, 529 and every other status >= 500 but 501
// (Not Implemented never changes), and status 0, which stands for "no HTTP response"
// (connection refused, reset, timeout). Never retried: every other 4xx (400, 401, 402
// OpenRouter credits, 403, 404, 413, 422, ...) and the 429s that never clear:
// OpenAI `insufficient_quota` / `billing_hard_limit_reached` and Anthropic
// `enforced_spend_limit_reached` (matched on the error's type, code or details.error_code,
// or on OpenAI's "exceeded your current quota" text). `x-should-retry: true|false` overrides
// the status table, but not the quota check.
//
// Delay: `retry-after-ms`, else `Retry-After` as seconds (fractions allowed) or as an
// HTTP-date relative to the response's own `Date` header (else to `now`), when positive. A
// server delay above 60 s means no retry (the reason says so) rather than a silent minute-long
// hang. Otherwise BackoffMs.
//
// The caller owns the attempt limit: DecideRetry never gives up because of `attempt`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace agent::daemon::llm {

struct HttpFailure {
  int status = 0;    // 0: no HTTP response at all (the body then holds the transport error)
  std::string body;  // the response body, usually JSON
  std::vector<std::pair<std::string, std::string>> headers;  // names in any case
};

struct RetryDecision {
  bool retry = false;
  int64_t delay_ms = 0;  // meaningful when retry
  std::string reason;    // one line for the user, e.g. "API 429: slow down"
};

inline constexpr int64_t kMaxServerDelayMs = 60'000;
inline constexpr int64_t kMaxBackoffMs = 30'000;

// `attempt` is the 1-based number of failures so far; `jitter_seed` makes the jitter
// reproducible (pass a random value in production).
RetryDecision DecideRetry(const HttpFailure& f, int attempt, absl::Time now, uint64_t jitter_seed);

// The server's own message in an error body, at most 200 characters on one line: OpenAI and
// Anthropic `error.message` (or `error` when it is a string, as Ollama sends), vLLM's
// top-level `message`, FastAPI's `detail`; for OpenRouter the upstream provider's message
// inside `error.metadata.raw` when there is one. Otherwise the body itself, trimmed; for an
// empty body, the status's reason phrase ("Bad Gateway"), or "" for an unknown status.
std::string ExtractErrorMessage(int status, const std::string& body);

// Exponential backoff: 1, 2, 4, 8, 16, 30, 30 ... s for attempt 1, 2, 3 ..., times a jitter
// factor in [0.75, 1] derived from (jitter_seed, attempt).
int64_t BackoffMs(int attempt, uint64_t jitter_seed);

}  // namespace agent::daemon::llm
