#include "daemon/llm/failure_policy.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/llm/error_text.h"
#include "daemon/llm/retry_policy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::StatusIs;
using ::testing::HasSubstr;

constexpr std::string_view kUrl = "http://127.0.0.1:1/v1/chat/completions";
const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

FailureDecision Classify(const AttemptOutcome& o, int attempt = 1) {
  return ClassifyFailure(o, kUrl, attempt, kNow, /*jitter_seed=*/7);
}

AttemptOutcome Http(int status, std::string body) {
  AttemptOutcome o;
  o.http_status = status;
  o.body = std::move(body);
  return o;
}

AttemptOutcome Streamed(absl::Status error, bool output_started) {
  AttemptOutcome o;
  o.http_status = 200;
  o.streamed = true;
  o.stream_error = std::move(error);
  o.output_started = output_started;
  return o;
}

TEST(ClassifyFailure, UnreachableIsRetriedWithBackoff) {
  AttemptOutcome o;
  o.transport_error = true;
  o.transport_message = "Connection refused";
  FailureDecision d = Classify(o, 2);
  EXPECT_EQ(d.action, FailureAction::kRetry);
  EXPECT_THAT(d.status, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(d.status.message(),
            absl::StrCat("cannot reach ", std::string(kUrl), ": Connection refused"));
  EXPECT_EQ(d.reason, d.status.message());
  EXPECT_EQ(d.delay_ms, BackoffMs(2, 7));
}

TEST(ClassifyFailure, RefusedLoopbackFailsAtOnceSayingNothingListens) {
  AttemptOutcome o;
  o.transport_error = true;
  o.connection_refused = true;
  o.transport_message = "Connection refused";
  FailureDecision d = Classify(o);
  EXPECT_EQ(d.action, FailureAction::kFailNow);
  EXPECT_THAT(d.status, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(std::string(d.status.message()),
              HasSubstr(absl::StrCat("nothing listens on ", std::string(kUrl))));
}

TEST(ClassifyFailure, RefusedRemoteHostIsStillRetried) {
  AttemptOutcome o;
  o.transport_error = true;
  o.connection_refused = true;
  o.transport_message = "Connection refused";
  FailureDecision d = ClassifyFailure(o, "https://api.example.com/v1/chat/completions", 1, kNow, 7);
  EXPECT_EQ(d.action, FailureAction::kRetry);
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("cannot reach"));
}

TEST(IsLoopbackUrl, KnowsTheLocalHostsOnly) {
  for (const char* url :
       {"http://127.0.0.1:1/v1", "http://localhost:11434/v1", "http://[::1]:8/v1",
        "http://127.1.2.3/v1", "http://LOCALHOST/v1", "http://u:p@127.0.0.1:9/"}) {
    EXPECT_TRUE(IsLoopbackUrl(url)) << url;
  }
  for (const char* url :
       {"https://api.openai.com/v1", "http://10.0.0.1:8000/v1", "http://localhost.example.com/v1",
        "http://127.0.0.1.evil.com/v1", "http://[::2]/v1"}) {
    EXPECT_FALSE(IsLoopbackUrl(url)) << url;
  }
}

TEST(ClassifyFailure, TimeoutBeforeAnAnswerSaysNoAnswer) {
  AttemptOutcome o;
  o.transport_error = true;
  o.timed_out = true;
  o.transport_message = "no data for 300 ms";
  EXPECT_THAT(std::string(Classify(o).status.message()), HasSubstr("no answer from"));
  EXPECT_EQ(Classify(o).action, FailureAction::kRetry);
}

TEST(ClassifyFailure, BadRequestFailsAtOnceWithTheServersMessage) {
  FailureDecision d = Classify(Http(400, R"({"error":{"message":"bad tool schema"}})"));
  EXPECT_EQ(d.action, FailureAction::kFailNow);
  EXPECT_THAT(d.status, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(d.status.message(), "API 400: bad tool schema");
}

TEST(ClassifyFailure, HttpStatusCodes) {
  EXPECT_THAT(Classify(Http(401, "")).status, StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(Classify(Http(403, "")).status, StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(Classify(Http(404, "")).status, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Classify(Http(503, "")).status, StatusIs(absl::StatusCode::kUnavailable));
}

TEST(ClassifyFailure, RateLimitIsRetriedAfterTheServersDelay) {
  AttemptOutcome o = Http(429, R"({"error":{"message":"slow down"}})");
  o.headers = {{"retry-after", "3"}};
  FailureDecision d = Classify(o);
  EXPECT_EQ(d.action, FailureAction::kRetry);
  EXPECT_THAT(d.status, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(d.delay_ms, 3000);
  EXPECT_THAT(d.reason, HasSubstr("slow down"));
}

TEST(ClassifyFailure, QuotaIsNotRetried) {
  FailureDecision d = Classify(Http(
      429,
      R"({"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}})"));
  EXPECT_EQ(d.action, FailureAction::kFailNow);
}

TEST(ClassifyFailure, JsonInsteadOfAStreamFailsAtOnce) {
  FailureDecision d = Classify(Http(200, R"({"choices":[]})"));
  EXPECT_EQ(d.action, FailureAction::kFailNow);
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("JSON instead of a stream"));
}

TEST(ClassifyFailure, CutErrorBodyIsStillAnHttpError) {
  AttemptOutcome o = Http(500, R"({"error":{"message":"oops"}})");
  o.transport_error = true;
  FailureDecision d = Classify(o);
  EXPECT_EQ(d.action, FailureAction::kRetry);
  EXPECT_EQ(d.status.message(), "API 500: oops");
}

TEST(ClassifyFailure, StreamFailureBeforeOutputIsRetriedWhenTransient) {
  FailureDecision d = Classify(Streamed(absl::UnavailableError("Overloaded"), false), 3);
  EXPECT_EQ(d.action, FailureAction::kRetry);
  EXPECT_EQ(d.delay_ms, BackoffMs(3, 7));
  EXPECT_EQ(d.reason, "Overloaded");
}

TEST(ClassifyFailure, InStreamRequestErrorFailsAtOnce) {
  FailureDecision d = Classify(Streamed(absl::InvalidArgumentError("bad"), false));
  EXPECT_EQ(d.action, FailureAction::kFailNow);
  EXPECT_THAT(d.status, StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ClassifyFailure, StreamFailureAfterOutputFailsLoud) {
  FailureDecision d = Classify(Streamed(absl::UnavailableError("the stream broke: reset"), true));
  EXPECT_EQ(d.action, FailureAction::kFailLoud);
  EXPECT_THAT(d.status, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(d.status.message(),
            "the reply broke off after it had started: the stream broke: reset");
}

TEST(ClassifyFailure, CapIsNeverRetriedAndKeepsItsMessage) {
  const absl::Status cap = CapExceededError("the reply", size_t{32} << 20, "kMaxReplyBytes");
  for (bool started : {false, true}) {
    FailureDecision d = Classify(Streamed(cap, started));
    EXPECT_EQ(d.action, FailureAction::kFailNow);
    EXPECT_EQ(d.status, cap);
  }
}

}  // namespace
}  // namespace agent::daemon::llm
