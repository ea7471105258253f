#include "daemon/llm/failure_policy.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/llm/error_text.h"
#include "daemon/llm/retry_policy.h"

namespace agent::daemon::llm {
namespace {

FailureDecision Decide(FailureAction action, absl::Status status, int64_t delay_ms = 0) {
  FailureDecision d;
  d.action = action;
  d.reason = OneLineTruncated(std::string(status.message()));
  d.status = std::move(status);
  d.delay_ms = delay_ms;
  return d;
}

FailureDecision ClassifyStreamFailure(const AttemptOutcome& o, int attempt, uint64_t jitter_seed) {
  const absl::Status& e = o.stream_error;
  if (e.ok()) {
    return Decide(FailureAction::kFailNow,
                  absl::InternalError("the stream ended without a reply or an error"));
  }
  if (absl::IsResourceExhausted(e)) return Decide(FailureAction::kFailNow, e);
  if (o.output_started) {
    return Decide(FailureAction::kFailLoud,
                  absl::DataLossError(
                      absl::StrCat("the reply broke off after it had started: ", e.message())));
  }
  if (absl::IsUnavailable(e)) {
    return Decide(FailureAction::kRetry, e, BackoffMs(attempt, jitter_seed));
  }
  return Decide(FailureAction::kFailNow, e);
}

}  // namespace

bool IsLoopbackUrl(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  std::string_view rest = url.substr(start);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  std::string_view host = rest;
  if (!host.empty() && host.front() == '[') {
    host = host.substr(
        1, host.find(']') == std::string_view::npos ? host.size() - 1 : host.find(']') - 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  const std::string h = absl::AsciiStrToLower(std::string(host));
  if (h == "localhost" || h == "::1" || absl::EndsWith(h, ".localhost")) return true;
  // 127.0.0.0/8 as an address, not a name that starts like one (127.0.0.1.example.com).
  return absl::StartsWith(h, "127.") && std::count(h.begin(), h.end(), '.') == 3 &&
         h.find_first_not_of("0123456789.") == std::string::npos;
}

absl::Status HttpErrorStatus(int status, std::string_view message) {
  std::string text = absl::StrCat("API ", status, ": ", std::string(message));
  switch (status) {
    case 400:
    case 413:
    case 422:
      return absl::InvalidArgumentError(text);
    case 401:
      return absl::UnauthenticatedError(text);
    case 402:
    case 403:
      return absl::PermissionDeniedError(text);
    case 404:
      return absl::NotFoundError(text);
    case 429:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::UnavailableError(text);
  }
}

FailureDecision ClassifyFailure(const AttemptOutcome& o, std::string_view url, int attempt,
                                absl::Time now, uint64_t jitter_seed) {
  if (o.streamed) return ClassifyStreamFailure(o, attempt, jitter_seed);
  if (o.transport_error && o.body.empty() && o.connection_refused && IsLoopbackUrl(url)) {
    return Decide(FailureAction::kFailNow,
                  absl::UnavailableError(absl::StrCat("nothing listens on ", std::string(url), ": ",
                                                      o.transport_message)));
  }
  if (o.transport_error && o.body.empty()) {
    // Nothing came back: the server is unreachable, or went silent before answering.
    return Decide(
        FailureAction::kRetry,
        absl::UnavailableError(absl::StrCat(o.timed_out ? "no answer from " : "cannot reach ",
                                            std::string(url), ": ", o.transport_message)),
        BackoffMs(attempt, jitter_seed));
  }
  if (o.http_status == 200) {
    return Decide(
        FailureAction::kFailNow,
        absl::UnavailableError(absl::StrCat("the server answered with JSON instead of a stream: ",
                                            OneLineTruncated(o.body))));
  }
  const RetryDecision r =
      DecideRetry(HttpFailure{o.http_status, o.body, o.headers}, attempt, now, jitter_seed);
  FailureDecision d = Decide(
      r.retry ? FailureAction::kRetry : FailureAction::kFailNow,
      HttpErrorStatus(o.http_status, ExtractErrorMessage(o.http_status, o.body)), r.delay_ms);
  d.reason = OneLineTruncated(r.reason);
  return d;
}

}  // namespace agent::daemon::llm
