#include "daemon/llm/retry_policy.h"

#include <set>
#include <string>

#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

using ::testing::HasSubstr;

// 2015-10-21 07:28:00 UTC, the date in RFC 9110's example.
absl::Time Now() {
  return absl::FromCivil(absl::CivilSecond(2015, 10, 21, 7, 28, 0), absl::UTCTimeZone());
}

HttpFailure Failure(int status, std::string body = "",
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
  return HttpFailure{status, std::move(body), std::move(headers)};
}

TEST(RetryPolicy, RetryAfterSeconds) {
  RetryDecision d = DecideRetry(Failure(429, "", {{"Retry-After", "7"}}), 1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, 7000);
}

TEST(RetryPolicy, RetryAfterFractionalSeconds) {
  RetryDecision d = DecideRetry(Failure(503, "", {{"retry-after", " 1.5 "}}), 1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, 1500);
}

TEST(RetryPolicy, RetryAfterHttpDate) {
  RetryDecision d = DecideRetry(
      Failure(429, "", {{"Retry-After", "Wed, 21 Oct 2015 07:28:12 GMT"}}), 1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, 12000);
}

TEST(RetryPolicy, RetryAfterHttpDateIsReadAgainstTheResponsesOwnDate) {
  // The local clock is an hour behind the server's: "retry at 08:28:03" with the server's Date
  // of 08:28:00 is a 3 s wait, not an hour (which would not be retried at all).
  RetryDecision d = DecideRetry(Failure(429, R"({"error":{"message":"slow down"}})",
                                        {{"Retry-After", "Wed, 21 Oct 2015 08:28:03 GMT"},
                                         {"Date", "Wed, 21 Oct 2015 08:28:00 GMT"}}),
                                1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, 3000);
  EXPECT_THAT(d.reason, HasSubstr("slow down"));
}

TEST(RetryPolicy, RetryAfterObsoleteDateForms) {
  EXPECT_EQ(DecideRetry(Failure(429, "", {{"Retry-After", "Wednesday, 21-Oct-15 07:28:05 GMT"}}), 1,
                        Now(), 1)
                .delay_ms,
            5000);
  EXPECT_EQ(
      DecideRetry(Failure(429, "", {{"Retry-After", "Wed Oct 21 07:28:03 2015"}}), 1, Now(), 1)
          .delay_ms,
      3000);
}

TEST(RetryPolicy, RetryAfterDateInThePastFallsBackToBackoff) {
  RetryDecision d = DecideRetry(
      Failure(429, "", {{"Retry-After", "Wed, 21 Oct 2015 07:00:00 GMT"}}), 2, Now(), 9);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, BackoffMs(2, 9));
}

TEST(RetryPolicy, RetryAfterGarbageFallsBackToBackoff) {
  RetryDecision d = DecideRetry(Failure(429, "", {{"Retry-After", "soon"}}), 1, Now(), 3);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, BackoffMs(1, 3));
}

TEST(RetryPolicy, RetryAfterMsWinsOverRetryAfter) {
  RetryDecision d = DecideRetry(
      Failure(429, "", {{"Retry-After", "20"}, {"retry-after-ms", "250"}}), 1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, 250);
}

TEST(RetryPolicy, ServerDelayOverCapIsNotRetried) {
  RetryDecision d = DecideRetry(
      Failure(429, R"({"error":{"message":"Rate limit reached"}})", {{"Retry-After", "120"}}), 1,
      Now(), 1);
  EXPECT_FALSE(d.retry);
  EXPECT_EQ(
      d.reason,
      "API 429: Rate limit reached (the server asks to wait 120 s, more than the 60 s we wait)");
  EXPECT_TRUE(DecideRetry(Failure(429, "", {{"Retry-After", "60"}}), 1, Now(), 1).retry);
}

TEST(RetryPolicy, QuotaTooManyRequestsNotRetried) {
  const std::string openai =
      R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})";
  RetryDecision d = DecideRetry(Failure(429, openai, {{"Retry-After", "1"}}), 1, Now(), 1);
  EXPECT_FALSE(d.retry);
  EXPECT_THAT(d.reason, HasSubstr("API 429: You exceeded your current quota"));

  const std::string anthropic =
      R"({"type":"error","error":{"type":"rate_limit_error","message":"spend limit","details":{"error_code":"enforced_spend_limit_reached"}}})";
  EXPECT_FALSE(DecideRetry(Failure(429, anthropic), 1, Now(), 1).retry);

  // Only the message says so (a proxy that kept the text but not the code).
  EXPECT_FALSE(DecideRetry(Failure(429, "You exceeded your current quota."), 1, Now(), 1).retry);

  // OpenRouter wrapping the upstream error in metadata.raw.
  const std::string wrapped =
      R"({"error":{"code":429,"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"type\":\"insufficient_quota\",\"message\":\"quota\"}}"}}})";
  EXPECT_FALSE(DecideRetry(Failure(429, wrapped), 1, Now(), 1).retry);

  // x-should-retry cannot revive a quota error.
  EXPECT_FALSE(DecideRetry(Failure(429, openai, {{"x-should-retry", "true"}}), 1, Now(), 1).retry);
}

TEST(RetryPolicy, PlainRateLimitRetried) {
  RetryDecision d = DecideRetry(
      Failure(
          429,
          R"({"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}})"),
      1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.reason, "API 429: slow down");
}

TEST(RetryPolicy, TransientStatusesRetried) {
  for (int status : {0, 408, 409, 429, 500, 502, 503, 504, 520, 529}) {
    EXPECT_TRUE(DecideRetry(Failure(status), 1, Now(), 1).retry) << status;
  }
}

TEST(RetryPolicy, PermanentStatusesNeverRetried) {
  for (int status : {400, 401, 402, 403, 404, 405, 413, 422, 501}) {
    RetryDecision d = DecideRetry(Failure(status, "", {{"Retry-After", "1"}}), 1, Now(), 1);
    EXPECT_FALSE(d.retry) << status;
  }
}

TEST(RetryPolicy, XShouldRetryHonoured) {
  EXPECT_FALSE(DecideRetry(Failure(503, "", {{"X-Should-Retry", "false"}}), 1, Now(), 1).retry);
  EXPECT_TRUE(DecideRetry(Failure(400, "", {{"x-should-retry", "true"}}), 1, Now(), 1).retry);
}

TEST(RetryPolicy, BackoffSequenceWithJitter) {
  const int64_t bases[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    for (int attempt = 1; attempt <= 8; ++attempt) {
      const int64_t ms = BackoffMs(attempt, seed);
      const int64_t base = bases[attempt - 1];
      EXPECT_GE(ms, base * 3 / 4) << attempt;
      EXPECT_LE(ms, base) << attempt;
    }
  }
  EXPECT_LE(BackoffMs(1000, 1), kMaxBackoffMs);
  EXPECT_GE(BackoffMs(0, 1), 750);  // attempt below 1 counts as 1
}

TEST(RetryPolicy, BackoffIsReproducibleAndJittered) {
  EXPECT_EQ(BackoffMs(3, 42), BackoffMs(3, 42));
  std::set<int64_t> values;
  for (uint64_t seed = 0; seed < 20; ++seed) values.insert(BackoffMs(3, seed));
  EXPECT_GT(values.size(), 10u);
}

TEST(RetryPolicy, DecisionWithoutServerDelayUsesBackoff) {
  RetryDecision d = DecideRetry(Failure(502, "<html>Bad gateway</html>"), 4, Now(), 77);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay_ms, BackoffMs(4, 77));
  EXPECT_EQ(d.reason, "API 502: <html>Bad gateway</html>");
}

TEST(RetryPolicy, ConnectionFailureReason) {
  RetryDecision d = DecideRetry(Failure(0, "Couldn't connect to server"), 1, Now(), 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.reason, "connection failed: Couldn't connect to server");
}

TEST(ExtractErrorMessage, OpenAiShape) {
  EXPECT_EQ(
      ExtractErrorMessage(
          400,
          R"({"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"),
      "This model's maximum context length is 8192 tokens.");
}

TEST(ExtractErrorMessage, AnthropicShape) {
  EXPECT_EQ(
      ExtractErrorMessage(
          400,
          R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 205351 tokens > 200000 maximum"},"request_id":"req_1"})"),
      "prompt is too long: 205351 tokens > 200000 maximum");
}

TEST(ExtractErrorMessage, VllmTopLevelMessage) {
  EXPECT_EQ(
      ExtractErrorMessage(
          400,
          R"({"object":"error","message":"Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})"),
      "Please reduce the length of the messages or completion.");
}

TEST(ExtractErrorMessage, OllamaStringError) {
  EXPECT_EQ(ExtractErrorMessage(404, R"({"error":"model 'llama9' not found"})"),
            "model 'llama9' not found");
}

TEST(ExtractErrorMessage, OpenRouterRawInnerMessage) {
  const std::string body =
      R"({"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.48.content.1: unexpected `tool_use_id`\"}}","provider_name":"Anthropic"}}})";
  EXPECT_EQ(ExtractErrorMessage(400, body), "messages.48.content.1: unexpected `tool_use_id`");
  // A raw that is plain text is used as is; an empty raw falls back to the outer message.
  EXPECT_EQ(
      ExtractErrorMessage(
          502,
          R"({"error":{"message":"Provider returned error","metadata":{"raw":"upstream timeout"}}})"),
      "upstream timeout");
  EXPECT_EQ(ExtractErrorMessage(
                502, R"({"error":{"message":"Provider returned error","metadata":{"raw":""}}})"),
            "Provider returned error");
}

TEST(ExtractErrorMessage, RawBodyTrimmedToOneLine) {
  EXPECT_EQ(ExtractErrorMessage(502, "  <html>\n  <h1>502</h1>\n</html>\n"),
            "<html> <h1>502</h1> </html>");
}

TEST(ExtractErrorMessage, EmptyBodyGivesReasonPhrase) {
  EXPECT_EQ(ExtractErrorMessage(503, ""), "Service Unavailable");
  EXPECT_EQ(ExtractErrorMessage(599, "  "), "");
}

TEST(ExtractErrorMessage, First200Characters) {
  std::string msg;
  for (int i = 0; i < 250; ++i) msg += "ж";
  const std::string got = ExtractErrorMessage(400, "{\"error\":{\"message\":\"" + msg + "\"}}");
  EXPECT_EQ(got, msg.substr(0, 400));  // 200 two-byte characters
}

}  // namespace
}  // namespace agent::daemon::llm
