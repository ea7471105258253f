#include "daemon/base/process_runner.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/process_table.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

using namespace std::chrono_literals;

ProcessSpec Spec(std::vector<std::string> argv, const std::string& cwd) {
  ProcessSpec spec;
  spec.program = argv[0];
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.env = {"ONLY=this"};
  return spec;
}

TEST(ProcessRunnerTest, ArgvIsExecutedAsGivenWithExactlyItsEnvironment) {
  testing::TempDir dir;
  // No shell: `$ONLY` stays literal in argv, and /usr/bin/env shows the whole environment.
  auto echo = RealProcessRunner().Run(Spec({"/bin/echo", "$ONLY", "a b"}, dir.path()));
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_EQ(echo->out, "$ONLY a b\n");
  auto env = RealProcessRunner().Run(Spec({"/usr/bin/env"}, dir.path()));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->out, "ONLY=this\n");
  EXPECT_TRUE(env->exited);
  EXPECT_EQ(env->exit_code, 0);
}

TEST(ProcessRunnerTest, InputOnStdinAndOutputsApartAndCapped) {
  testing::TempDir dir;
  ProcessSpec spec = Spec({"/bin/sh", "-c", "cat; echo err >&2; exit 3"}, dir.path());
  spec.input = std::string(200000, 'x');  // more than a pipe holds
  spec.max_output = 1000;
  auto r = RealProcessRunner().Run(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->out, std::string(1000, 'x'));
  EXPECT_TRUE(r->out_cut);
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(ProcessRunnerTest, AMissingProgramOrDirectoryIsAClearError) {
  testing::TempDir dir;
  auto missing = RealProcessRunner().Run(Spec({"/nonexistent/program"}, dir.path()));
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  auto bad_cwd = RealProcessRunner().Run(Spec({"/bin/true"}, dir.Join("gone")));
  EXPECT_TRUE(absl::IsInternal(bad_cwd.status())) << bad_cwd.status();
  EXPECT_NE(bad_cwd.status().message().find(dir.Join("gone")), std::string::npos);
}

TEST(ProcessRunnerTest, ATimeoutKillsTheProgram) {
  testing::TempDir dir;
  ProcessSpec spec = Spec({"/bin/sleep", "60"}, dir.path());
  spec.timeout = 200ms;
  auto r = RealProcessRunner().Run(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->exited);
  EXPECT_LT(r->elapsed, 30s);
}

// This process's children that ended and that nothing reaped.
int ZombieChildren() {
  int n = 0;
  for (const ProcessEntry& p : ReadProcessTable()) {
    if (p.ppid == ::getpid() && p.state == 'Z') ++n;
  }
  return n;
}

TEST(ProcessRunnerTest, WhatTheProgramLeftBehindIsReapedNotLeftAZombie) {
  // As agentd is: a subreaper, so the background child becomes ours when the shell exits.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {  // earlier tests' leftovers are not the subject
  }
  testing::TempDir dir;
  for (int i = 0; i < 5; ++i) {
    auto r = RealProcessRunner().Run(
        Spec({"/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo started"}, dir.path()));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->out, "started\n");
  }
  EXPECT_EQ(ZombieChildren(), 0);
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

}  // namespace
}  // namespace agent::daemon
