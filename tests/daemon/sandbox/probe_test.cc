#include "daemon/sandbox/probe.h"

#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_process_runner.h"

namespace agent::daemon::sandbox {
namespace {

using ::agent::testing::FakeProcessRunner;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

SandboxPolicy PolicyWithBwrap(const std::string& bwrap) {
  SandboxPolicy policy;
  policy.bwrap = bwrap;
  return policy;
}

TEST(ProbeTest, AMissingBwrapSaysHowToInstallItAndRunsNothing) {
  FakeProcessRunner runner;
  ProbeResult r = Probe(PolicyWithBwrap("/nonexistent/bwrap"), runner);
  EXPECT_FALSE(r.available);
  EXPECT_THAT(r.reason, HasSubstr("bubblewrap is not installed"));
  EXPECT_THAT(r.fix, HasSubstr("apt-get install bubblewrap"));
  EXPECT_THAT(runner.runs(), IsEmpty());
}

TEST(ProbeTest, RunsTheRealOptionsAroundTrueThroughTheSeam) {
  FakeProcessRunner runner;  // answers: exited 0
  ProbeResult r = Probe(PolicyWithBwrap("/bin/true"), runner);
  EXPECT_TRUE(r.available);
  ASSERT_EQ(runner.runs().size(), 1u);
  const ProcessSpec run = runner.runs()[0];
  EXPECT_EQ(run.program, "/bin/true");
  ASSERT_GE(run.argv.size(), 3u);
  EXPECT_EQ(run.argv.front(), "/bin/true");
  EXPECT_THAT(std::vector<std::string>(run.argv.end() - 2, run.argv.end()),
              ElementsAre("--", "/bin/true"));
  EXPECT_EQ(run.env, std::vector<std::string>{"PATH=/usr/bin:/bin"});  // none of the daemon's
  EXPECT_GT(run.timeout.count(), 0);  // a stuck bwrap cannot stall the daemon's start
}

TEST(ProbeTest, ARefusalGivesBwrapsFirstLineAndAFix) {
  FakeProcessRunner runner;
  runner.AnswerWith(FakeProcessRunner::Exited(
      1, "", "bwrap: No permissions to create new namespace\nsecond line\n"));
  ProbeResult r = Probe(PolicyWithBwrap("/bin/true"), runner);
  EXPECT_FALSE(r.available);
  EXPECT_EQ(r.reason,
            "bubblewrap cannot create a sandbox here: bwrap: No permissions to create new "
            "namespace");
  EXPECT_FALSE(r.fix.empty());
}

TEST(ProbeTest, NoAnswerInTimeAndNoStartAreSaid) {
  FakeProcessRunner runner;
  ProcessResult stuck;
  stuck.timed_out = true;
  runner.AnswerWith(stuck);
  EXPECT_THAT(Probe(PolicyWithBwrap("/bin/true"), runner).reason,
              HasSubstr("no answer within 5 s"));
  runner.AnswerWith(absl::InternalError("cannot start /bin/true in /: Permission denied"));
  EXPECT_THAT(Probe(PolicyWithBwrap("/bin/true"), runner).reason, HasSubstr("Permission denied"));
  ProcessResult silent = FakeProcessRunner::Exited(1);
  runner.AnswerWith(silent);
  EXPECT_THAT(Probe(PolicyWithBwrap("/bin/true"), runner).reason,
              HasSubstr("it failed without a message"));
}

}  // namespace
}  // namespace agent::daemon::sandbox
