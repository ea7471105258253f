#include "common/status_macros.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Eq;

// Runs `steps` in order through RETURN_IF_ERROR, recording each one evaluated.
absl::Status RunSteps(const std::vector<absl::Status>& steps, std::vector<int>* ran) {
  for (size_t i = 0; i < steps.size(); ++i) {
    RETURN_IF_ERROR((ran->push_back(static_cast<int>(i)), steps[i]));
  }
  return absl::OkStatus();
}

TEST(ReturnIfErrorTest, ReturnsTheFirstErrorAndRunsNothingAfterIt) {
  std::vector<int> ran;
  absl::Status s = RunSteps(
      {absl::OkStatus(), absl::NotFoundError("second"), absl::InternalError("third")}, &ran);
  EXPECT_EQ(s, absl::NotFoundError("second"));
  EXPECT_THAT(ran, ElementsAre(0, 1));
}

TEST(ReturnIfErrorTest, FallsThroughWhenEverythingIsOk) {
  std::vector<int> ran;
  EXPECT_THAT(RunSteps({absl::OkStatus(), absl::OkStatus()}, &ran), IsOk());
  EXPECT_THAT(ran, ElementsAre(0, 1));
}

TEST(ReturnIfErrorTest, EvaluatesItsExpressionOnce) {
  int calls = 0;
  auto fail_once = [&calls] {
    ++calls;
    return absl::UnavailableError("down");
  };
  auto run = [&]() -> absl::Status {
    RETURN_IF_ERROR(fail_once());
    return absl::OkStatus();
  };
  EXPECT_THAT(run(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(calls, 1);
}

TEST(ReturnIfErrorTest, IsOneStatementUnderAnUnbracedIf) {
  auto run = [](bool check, absl::Status s) -> absl::Status {
    if (check)
      RETURN_IF_ERROR(s);
    else
      return absl::CancelledError("not checked");
    return absl::OkStatus();
  };
  EXPECT_THAT(run(true, absl::OkStatus()), IsOk());
  EXPECT_THAT(run(true, absl::AbortedError("x")), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(run(false, absl::OkStatus()), StatusIs(absl::StatusCode::kCancelled));
}

TEST(ReturnIfErrorTest, WorksInAFunctionReturningStatusOr) {
  auto run = [](absl::Status s) -> absl::StatusOr<int> {
    RETURN_IF_ERROR(s);
    return 7;
  };
  EXPECT_EQ(*run(absl::OkStatus()), 7);
  EXPECT_THAT(run(absl::DataLossError("torn")), StatusIs(absl::StatusCode::kDataLoss));
}

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

// Two ASSIGN_OR_RETURNs in one scope: their hidden variables must not clash.
absl::StatusOr<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(AssignOrReturnTest, DeclaresTheValueOrReturnsTheError) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_THAT(Quarter(3), StatusIs(absl::StatusCode::kInvalidArgument, Eq("odd: 3")));
  EXPECT_THAT(Quarter(6), StatusIs(absl::StatusCode::kInvalidArgument, Eq("odd: 3")));  // 2nd step
}

TEST(AssignOrReturnTest, AssignsToAnExistingVariable) {
  std::string out = "unchanged";
  auto run = [&out](absl::StatusOr<std::string> in) -> absl::Status {
    ASSIGN_OR_RETURN(out, std::move(in));
    return absl::OkStatus();
  };
  EXPECT_THAT(run(absl::NotFoundError("gone")), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(out, "unchanged");
  EXPECT_THAT(run(std::string("new")), IsOk());
  EXPECT_EQ(out, "new");
}

TEST(AssignOrReturnTest, MovesAMoveOnlyValue) {
  auto make = [](bool ok) -> absl::StatusOr<std::unique_ptr<int>> {
    if (!ok) return absl::ResourceExhaustedError("full");
    return std::make_unique<int>(42);
  };
  auto run = [&make](bool ok) -> absl::StatusOr<int> {
    ASSIGN_OR_RETURN(std::unique_ptr<int> p, make(ok));
    return *p;
  };
  EXPECT_EQ(*run(true), 42);
  EXPECT_THAT(run(false), StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(AnnotateTest, PutsTheContextBeforeTheMessageAndKeepsTheCode) {
  absl::Status s = Annotate(absl::NotFoundError("no such file"), "/etc/agent/config.json");
  EXPECT_EQ(s, absl::NotFoundError("/etc/agent/config.json: no such file"));
  EXPECT_EQ(Annotate(Annotate(absl::InternalError("x"), "inner"), "outer"),
            absl::InternalError("outer: inner: x"));
}

TEST(AnnotateTest, OkStaysOk) {
  EXPECT_EQ(Annotate(absl::OkStatus(), "context"), absl::OkStatus());
  EXPECT_TRUE(Annotate(absl::OkStatus(), "context").message().empty());
}

}  // namespace
}  // namespace agent
