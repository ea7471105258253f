#include "daemon/llm/retry_policy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"
#include "daemon/llm/error_text.h"

namespace agent::daemon::llm {
namespace {

std::optional<std::string> Header(const HttpFailure& f, absl::string_view name) {
  for (const auto& [key, value] : f.headers) {
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(key), name)) {
      return std::string(absl::StripAsciiWhitespace(value));
    }
  }
  return std::nullopt;
}

std::optional<double> ParseNumber(const std::string& s) {
  double v = 0;
  if (s.empty() || !absl::SimpleAtod(s, &v) || !std::isfinite(v)) return std::nullopt;
  return v;
}

// RFC 9110 IMF-fixdate, plus the two obsolete forms it says recipients should accept.
std::optional<absl::Time> ParseHttpDate(const std::string& s) {
  static constexpr const char* kFormats[] = {
      "%a, %d %b %Y %H:%M:%S GMT",  // Sun, 06 Nov 1994 08:49:37 GMT
      "%A, %d-%b-%y %H:%M:%S GMT",  // Sunday, 06-Nov-94 08:49:37 GMT
      "%a %b %e %H:%M:%S %Y",       // Sun Nov  6 08:49:37 1994
  };
  for (const char* format : kFormats) {
    absl::Time t;
    std::string err;
    if (absl::ParseTime(format, s, absl::UTCTimeZone(), &t, &err)) return t;
  }
  return std::nullopt;
}

// The server's requested delay in ms, when it asked for a positive one.
std::optional<int64_t> ServerDelayMs(const HttpFailure& f, absl::Time now) {
  if (auto ms = Header(f, "retry-after-ms")) {
    if (auto v = ParseNumber(*ms); v && *v > 0) {
      return static_cast<int64_t>(std::ceil(std::min(*v, 1e15)));
    }
  }
  if (auto ra = Header(f, "retry-after")) {
    if (auto v = ParseNumber(*ra)) {
      if (*v > 0) return static_cast<int64_t>(std::ceil(std::min(*v, 1e12) * 1000));
      return std::nullopt;
    }
    if (auto t = ParseHttpDate(*ra)) {
      // Read against the server's own clock when it sent one: a local clock an hour behind
      // must not turn "retry in 3 s" into an hour.
      absl::Time server_now = now;
      if (auto date = Header(f, "date")) {
        if (auto d = ParseHttpDate(*date)) server_now = *d;
      }
      const int64_t ms = absl::ToInt64Milliseconds(*t - server_now);
      if (ms > 0) return ms;
    }
  }
  return std::nullopt;
}

bool IsQuotaKind(const std::string& kind) {
  return kind == "insufficient_quota" || kind == "billing_hard_limit_reached" ||
         kind == "billing_not_active" || kind == "enforced_spend_limit_reached";
}

bool IsQuotaError(const Json& body, int depth) {
  if (!body.is_object() || depth > 3) return false;
  const Json* err = &body;
  if (auto it = body.find("error"); it != body.end() && it->is_object()) err = &*it;
  if (IsQuotaKind(GetString(*err, "type")) || IsQuotaKind(GetString(*err, "code"))) return true;
  if (auto d = err->find("details"); d != err->end() && d->is_object()) {
    if (IsQuotaKind(GetString(*d, "error_code"))) return true;
  }
  // OpenRouter wraps the upstream error as a JSON string in metadata.raw.
  if (auto md = err->find("metadata"); md != err->end() && md->is_object()) {
    if (auto raw = md->find("raw"); raw != md->end()) {
      if (raw->is_string()) {
        return IsQuotaError(Json::parse(raw->get<std::string>(), nullptr, false), depth + 1);
      }
      return IsQuotaError(*raw, depth + 1);
    }
  }
  return false;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 402:
      return "Payment Required";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 529:
      return "Overloaded";
    default:
      return "";
  }
}

std::string MessageFromJson(const Json& body, int depth) {
  if (!body.is_object() || depth > 3) return "";
  if (auto it = body.find("error"); it != body.end()) {
    if (it->is_string()) return it->get<std::string>();  // Ollama: {"error":"model ... not found"}
    if (it->is_object()) {
      if (auto md = it->find("metadata"); md != it->end() && md->is_object()) {
        if (auto raw = md->find("raw"); raw != md->end()) {
          std::string inner;
          if (raw->is_string()) {
            const std::string& text = raw->get_ref<const std::string&>();
            const Json parsed = Json::parse(text, nullptr, false);
            inner = parsed.is_discarded() ? text : MessageFromJson(parsed, depth + 1);
          } else {
            inner = MessageFromJson(*raw, depth + 1);
          }
          if (!OneLineTruncated(inner).empty()) return inner;
        }
      }
      return GetString(*it, "message");
    }
  }
  std::string message = GetString(body, "message");          // vLLM
  if (message.empty()) message = GetString(body, "detail");  // FastAPI-based servers
  return message;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string ExtractErrorMessage(int status, const std::string& body) {
  const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) {
    std::string message = OneLineTruncated(MessageFromJson(parsed, 0));
    if (!message.empty()) return message;
  }
  std::string raw = OneLineTruncated(body);
  if (raw.empty()) raw = ReasonPhrase(status);
  return raw;
}

int64_t BackoffMs(int attempt, uint64_t jitter_seed) {
  const int n = std::clamp(attempt, 1, 16);
  const int64_t base = std::min<int64_t>(int64_t{1000} << (n - 1), kMaxBackoffMs);
  const uint64_t r = SplitMix64(jitter_seed ^ (static_cast<uint64_t>(n) * 0xD1B54A32D192ED03ULL));
  const double unit = static_cast<double>(r >> 11) / 9007199254740992.0;  // [0, 1)
  const double factor = 0.75 + 0.25 * unit;
  return static_cast<int64_t>(std::llround(static_cast<double>(base) * factor));
}

RetryDecision DecideRetry(const HttpFailure& f, int attempt, absl::Time now, uint64_t jitter_seed) {
  RetryDecision d;
  const std::string message = ExtractErrorMessage(f.status, f.body);
  if (f.status == 0) {
    d.reason = message.empty() ? "no response from the server"
                               : absl::StrCat("connection failed: ", message);
  } else {
    d.reason = message.empty() ? absl::StrCat("API ", f.status)
                               : absl::StrCat("API ", f.status, ": ", message);
  }

  const Json body = Json::parse(f.body, nullptr, /*allow_exceptions=*/false);
  const bool quota = IsQuotaError(body, 0) || absl::StrContains(absl::AsciiStrToLower(message),
                                                                "exceeded your current quota");
  if (quota) return d;  // a 429 that never clears: retrying only burns time

  bool retryable = f.status == 0 || f.status == 408 || f.status == 409 || f.status == 429 ||
                   (f.status >= 500 && f.status != 501);
  if (auto should = Header(f, "x-should-retry")) {
    if (absl::EqualsIgnoreCase(*should, "true")) retryable = true;
    if (absl::EqualsIgnoreCase(*should, "false")) retryable = false;
  }
  if (!retryable) return d;

  if (auto server_ms = ServerDelayMs(f, now)) {
    if (*server_ms > kMaxServerDelayMs) {
      absl::StrAppend(&d.reason, " (the server asks to wait ",
                      absl::StrFormat("%.0f", static_cast<double>(*server_ms) / 1000.0),
                      " s, more than the ", kMaxServerDelayMs / 1000, " s we wait)");
      return d;
    }
    d.retry = true;
    d.delay_ms = *server_ms;
    return d;
  }
  d.retry = true;
  d.delay_ms = BackoffMs(attempt, jitter_seed);
  return d;
}

}  // namespace agent::daemon::llm
