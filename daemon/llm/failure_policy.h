// What to do after one attempt of a model request failed: retry it, fail at once, or fail
// loudly because the user already saw part of the answer (DESIGN.md "The model transport",
// WIRE.md §6). Pure: the clock and the jitter come in as arguments. Thread-safe.
//
// The table, in the order it is applied:
// - a 200 event stream that went to the parser (`streamed`):
//   - a memory cap (kResourceExhausted from SseParser or the assembler): fail now, with the
//     error naming the cap; retrying would only hit it again;
//   - output already reached the sink: fail loud, kDataLoss "the reply broke off after it had
//     started: ..."; a silent retry would show a different answer;
//   - kUnavailable (an in-stream overload or server error, a cut or incomplete stream): retry
//     after BackoffMs;
//   - anything else (an in-stream request error, a malformed chunk): fail now;
// - a refused connection to a loopback host (`connection_refused`, IsLoopbackUrl): fail now,
//   kUnavailable "nothing listens on <url>": a local server that is not running does not come
//   up within the backoff, and the user is waiting; remote hosts are retried as below;
// - no answer at all (a transport error and no body): kUnavailable "cannot reach <url>: ..."
//   ("no answer from" after a timeout), retried after BackoffMs;
// - a 200 that is JSON, not a stream: fail now (kUnavailable, with the start of the body);
// - any other HTTP status: DecideRetry (retry_policy.h) decides and gives the delay; the
//   status is HttpErrorStatus with the server's own message.
// The caller owns the attempt limit and cancellation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace agent::daemon::llm {

// What one failed attempt ended with, as the transport saw it.
struct AttemptOutcome {
  bool transport_error = false;     // libcurl ended the transfer with an error
  bool timed_out = false;           // ... a connect or idle timeout
  bool connection_refused = false;  // ... the host answered the connect with a reset (ECONNREFUSED)
  std::string transport_message;    // libcurl's text for it ("Connection refused", ...)
  int http_status = 0;              // 0: no response
  bool streamed = false;            // a 200 event stream went to the parser
  std::string body;                 // a non-stream body (an error, as JSON), capped
  std::vector<std::pair<std::string, std::string>> headers;  // of the response
  // Streamed only: why the stream gave no reply (in-stream error, cap, malformed chunk, cut
  // or incomplete stream), and whether output had reached the sink.
  absl::Status stream_error;
  bool output_started = false;
};

enum class FailureAction { kRetry, kFailNow, kFailLoud };

struct FailureDecision {
  FailureAction action = FailureAction::kFailNow;
  absl::Status status;   // the error: returned as is unless the action is kRetry
  int64_t delay_ms = 0;  // kRetry only
  std::string reason;    // one line for StreamSink::OnRetry, e.g. "API 429: slow down"
};

// `url` names the endpoint in "cannot reach" errors; `attempt` is 1-based; `now` and
// `jitter_seed` feed the retry delay (retry_policy.h).
FailureDecision ClassifyFailure(const AttemptOutcome& outcome, std::string_view url, int attempt,
                                absl::Time now, uint64_t jitter_seed);

// Whether `url`'s host is this machine: localhost, 127.0.0.0/8 or [::1].
bool IsLoopbackUrl(std::string_view url);

// "API <status>: <message>" with the code a caller can act on: 400/413/422 InvalidArgument,
// 401 Unauthenticated, 402/403 PermissionDenied, 404 NotFound, 429 ResourceExhausted, others
// Unavailable.
absl::Status HttpErrorStatus(int status, std::string_view message);

}  // namespace agent::daemon::llm
