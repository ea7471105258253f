#include "daemon/hooks/hook_runner.h"

#include <signal.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "tests/fakes/fake_process_runner.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::hooks {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "HOOK_TEST=1"};

HookRun RunOne(const std::string& command, const std::string& input, const std::string& cwd,
               std::chrono::milliseconds timeout = 10s) {
  return RunHooks({{command, timeout}}, input, cwd, kEnv)[0];
}

TEST(HookRunnerTest, InputOnStdinOutputsApartInTheProject) {
  testing::TempDir dir;
  HookRun r = RunOne("cat; echo err >&2; pwd >&2; echo $HOOK_TEST", "{\"a\":1}", dir.path());
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"a\":1}1\n");
  EXPECT_EQ(r.err, "err\n" + dir.path() + "\n");
}

TEST(HookRunnerTest, ExitCodesAndSignals) {
  testing::TempDir dir;
  EXPECT_EQ(RunOne("exit 2", "", dir.path()).exit_code, 2);
  HookRun killed = RunOne("kill -SEGV $$", "", dir.path());
  EXPECT_FALSE(killed.exited);
  EXPECT_EQ(killed.term_signal, SIGSEGV);
}

TEST(HookRunnerTest, AHookThatHangsIsKilledWithItsChildren) {
  testing::TempDir dir;
  const std::string pidfile = dir.Join("child.pid");
  HookRun r = RunOne("sleep 60 & echo $! > " + pidfile + "; wait", "", dir.path(), 300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.elapsed, 10s);
  const pid_t child = std::stoi(testing::ReadFile(pidfile));
  // The group was killed: the background sleep is gone or a zombie nobody reaped yet (its
  // parent was the hook's shell). Bounded poll of /proc: the kill is asynchronous.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    const std::string stat = testing::ReadFile("/proc/" + std::to_string(child) + "/stat");
    gone = stat == "<missing>" || stat.substr(stat.rfind(')') + 2, 1) == "Z";
    if (!gone) usleep(10000);
  }
  EXPECT_TRUE(gone);
}

TEST(HookRunnerTest, AHookNeedNotReadItsInput) {
  testing::TempDir dir;
  std::string big(1 << 20, 'x');  // far more than a pipe holds
  HookRun r = RunOne("exit 0", big, dir.path());
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(HookRunnerTest, OutputIsCapped) {
  testing::TempDir dir;
  HookRun r = RunOne("head -c 1000000 /dev/zero | tr '\\0' y", "", dir.path());
  EXPECT_EQ(r.out.size(), kMaxHookOutput);
  EXPECT_TRUE(r.out_cut);
}

TEST(HookRunnerTest, HooksOfOneEventRunInParallel) {
  testing::TempDir dir;
  // Each waits (bounded) for the other's file: run one after the other, the first times out.
  auto meet = [&](const std::string& mine, const std::string& theirs) {
    return "touch " + dir.Join(mine) + "; i=0; while [ ! -e " + dir.Join(theirs) +
           " ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; [ -e " + dir.Join(theirs) + " ]";
  };
  auto runs = RunHooks({{meet("a", "b"), 20s}, {meet("b", "a"), 20s}}, "", dir.path(), kEnv);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].exit_code, 0);
  EXPECT_EQ(runs[1].exit_code, 0);
}

TEST(HookRunnerTest, ABadDirectoryIsAStartFailure) {
  HookRun r = RunOne("true", "", "/nonexistent/dir");
  EXPECT_FALSE(r.exited && r.exit_code == 0);
}

// Through the process seam: what a hook runs as, and what a runner's answer becomes.
TEST(HookRunnerTest, AHookIsAShellCommandInTheProjectWithExactlyItsEnvironment) {
  testing::FakeProcessRunner runner;
  runner.AnswerWith(testing::FakeProcessRunner::Exited(2, "", "blocked"));
  HookRun r = RunHooks({{"echo hi", 5s}}, "{}", "/project", kEnv, runner)[0];
  ASSERT_EQ(runner.runs().size(), 1u);
  const ProcessSpec spec = runner.runs()[0];
  EXPECT_EQ(spec.program, "/bin/sh");
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"/bin/sh", "-c", "echo hi"}));
  EXPECT_EQ(spec.cwd, "/project");
  EXPECT_EQ(spec.env, kEnv);
  EXPECT_EQ(spec.input, "{}");
  EXPECT_EQ(spec.timeout, 5s);
  EXPECT_EQ(spec.max_output, kMaxHookOutput);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "blocked");

  runner.AnswerWith(
      absl::InternalError("cannot start /bin/sh in /project: No such file or directory"));
  HookRun failed = RunHooks({{"true", 5s}}, "", "/project", kEnv, runner)[0];
  EXPECT_FALSE(failed.started);
  EXPECT_NE(failed.error.find("cannot start"), std::string::npos);
}

}  // namespace
}  // namespace agent::daemon::hooks
