#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "daemon/base/child_reaper.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/subprocess.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::ToolTest;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

class BashToolTest : public ToolTest {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(daemon::BecomeChildSubreaper().ok()); }
};

TEST_F(BashToolTest, ResultIncludesOutputAndExitCode) {
  ToolOutcome ok = Call("bash", {{"command", "echo hi"}});
  EXPECT_FALSE(ok.is_error);
  EXPECT_EQ(ok.content, "hi\n[exit code 0]");
  ToolOutcome fail = Call("bash", {{"command", "echo oops >&2; exit 3"}});
  EXPECT_TRUE(fail.is_error);
  EXPECT_EQ(fail.content, "oops\n[exit code 3]");
}

TEST_F(BashToolTest, NoOutputSaysSo) {
  EXPECT_EQ(Call("bash", {{"command", "true"}}).content, "(no output)\n[exit code 0]");
}

TEST_F(BashToolTest, RunsInTheWorkdir) {
  EXPECT_EQ(Call("bash", {{"command", "pwd"}}).content, dir_.path() + "\n[exit code 0]");
}

TEST_F(BashToolTest, TimeoutArgumentIsHonoured) {
  ToolOutcome out = Call("bash", {{"command", "sleep 30"}, {"timeout_s", 1}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, EndsWith("[timed out after 1 s; the command was killed]"));
}

TEST_F(BashToolTest, DefaultTimeoutComesFromTheContext) {
  ctx_.default_timeout_s = 1;
  ToolOutcome out = Call("bash", {{"command", "sleep 30"}});
  EXPECT_THAT(out.content, HasSubstr("[timed out after 1 s"));
}

TEST_F(BashToolTest, StreamsOutputThroughTheContext) {
  std::string streamed;
  ctx_.on_output = [&](std::string_view chunk, bool) { streamed.append(chunk); };
  Call("bash", {{"command", "echo one; echo two >&2"}});
  EXPECT_THAT(streamed, HasSubstr("one\n"));
  EXPECT_THAT(streamed, HasSubstr("two\n"));
}

TEST_F(BashToolTest, RespectsTheCancelFlag) {
  std::atomic<bool> cancelled{true};
  ctx_.cancelled = &cancelled;
  auto start = std::chrono::steady_clock::now();
  ToolOutcome out = Call("bash", {{"command", "sleep 30"}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("[cancelled"));
}

TEST_F(BashToolTest, LargeOutputIsCappedForTheModel) {
  ToolOutcome out = Call("bash", {{"command", "seq 1 100000"}});
  EXPECT_THAT(out.content, HasSubstr(" bytes omitted …\n"));
  EXPECT_LT(out.content.size(), 33u * 1024 + 200);
  EXPECT_THAT(out.content, HasSubstr("\n100000\n[exit code 0]"));
}

TEST_F(BashToolTest, MissingOrEmptyCommandIsAnError) {
  EXPECT_EQ(Call("bash", Json::object()).content, "bash: missing required argument \"command\"");
  EXPECT_TRUE(Call("bash", {{"command", "  "}}).is_error);
}

TEST_F(BashToolTest, CommandsGetTheContextsEnvironment) {
  ctx_.env = {"PATH=/usr/bin:/bin", "CLIENT_MARK=from-client"};
  EXPECT_EQ(Call("bash", {{"command", "echo $CLIENT_MARK $PATH"}}).content,
            "from-client /usr/bin:/bin\n[exit code 0]");
}

TEST_F(BashToolTest, WithoutAnEnvironmentCommandsGetTheMinimalOne) {
  ::setenv("AGENT_API_KEY", "sk-daemon-own", 1);
  ToolOutcome out = Call("bash", {{"command", "echo \"$PATH\"; env"}});
  ::unsetenv("AGENT_API_KEY");
  EXPECT_THAT(out.content, ::testing::StartsWith("/usr/local/bin:/usr/bin:/bin\n"));
  EXPECT_THAT(out.content, Not(HasSubstr("sk-daemon-own")));
}

TEST_F(BashToolTest, BinaryOutputIsValidUtf8) {
  ToolOutcome out = Call("bash", {{"command", "printf 'ok\\xff\\xfe'"}});
  EXPECT_EQ(out.content, "ok\xEF\xBF\xBD\xEF\xBF\xBD\n[exit code 0]");
}

TEST_F(BashToolTest, BackgroundStartsAJobThatBashJobReadsAndKills) {
  EXPECT_THAT(Call("bash", {{"command", "sleep 30"}, {"background", true}}).content,
              HasSubstr("background jobs cannot run here"));
  BackgroundJobs jobs;
  ctx_.jobs = &jobs;
  ToolOutcome started =
      Call("bash", {{"command", "echo serving; exec sleep 30"}, {"background", true}});
  EXPECT_FALSE(started.is_error) << started.content;
  EXPECT_THAT(started.content, HasSubstr("[started background job 1;"));
  EXPECT_THAT(Call("bash_job", Json::object()).content,
              HasSubstr("job 1 running: echo serving; exec sleep 30"));
  ToolOutcome killed = Call("bash_job", {{"job", 1}, {"kill", true}});
  EXPECT_THAT(killed.content, HasSubstr("[job 1 ended (killed)"));
  EXPECT_THAT(killed.content, HasSubstr("serving\n"));
  EXPECT_TRUE(Call("bash_job", {{"job", 2}}).is_error);
  EXPECT_TRUE(Call("bash_job", {{"job", "one"}}).is_error);
}

class SandboxedBashToolTest : public BashToolTest {
 protected:
  void SetUp() override {
    BashToolTest::SetUp();
    sandbox::SandboxPolicy p;
    p.bwrap = "/usr/bin/bwrap";
    box_ = std::make_unique<sandbox::Sandbox>(p);
    if (!box_->Confines()) GTEST_SKIP() << box_->Problem();
    ctx_.sandbox = box_.get();
    outside_ = std::filesystem::path(dir_.path()).parent_path() /
               ("bash-tool-outside-" + std::to_string(::getpid()));
  }
  void TearDown() override { std::filesystem::remove(outside_); }

  std::unique_ptr<sandbox::Sandbox> box_;
  std::filesystem::path outside_;
};

TEST_F(SandboxedBashToolTest, CommandsRunConfinedAndARefusalSaysWhy) {
  ToolOutcome in = Call("bash", {{"command", "echo x > inside && cat inside"}});
  EXPECT_EQ(in.content, "x\n[exit code 0]");
  // The host's /tmp is not the command's: the file lands in its private one.
  EXPECT_FALSE(Call("bash", {{"command", "touch " + outside_.string()}}).is_error);
  EXPECT_FALSE(std::filesystem::exists(outside_));
  ToolOutcome refused = Call("bash", {{"command", "echo x > /usr/bash-tool-test"}});
  EXPECT_TRUE(refused.is_error);
  EXPECT_THAT(refused.content, HasSubstr("Read-only file system"));
  EXPECT_THAT(refused.content, HasSubstr("[sandbox (workspace-write, network off)"));
  EXPECT_THAT(refused.content, HasSubstr("escalate"));
}

TEST_F(SandboxedBashToolTest, AnEscalatedCommandRunsOnTheHost) {
  // The policy lets it run only with a person's answer (daemon/policy/escalation.h).
  ToolOutcome out = Call(
      "bash",
      {{"command", "touch " + outside_.string()}, {"escalate", true}, {"justification", "test"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_TRUE(std::filesystem::exists(outside_));
}

TEST_F(SandboxedBashToolTest, ABackgroundJobOutlivesTheTurnThatStartedIt) {
  // bwrap's --die-with-parent follows the thread that spawned it: a job spawned by the turn's
  // thread would end with the turn.
  BackgroundJobs jobs;
  ctx_.jobs = &jobs;
  std::thread turn([&] { Call("bash", {{"command", "exec sleep 30"}, {"background", true}}); });
  turn.join();
  EXPECT_FALSE(jobs.WaitEnded(1, std::chrono::milliseconds(300)));
  EXPECT_THAT(*jobs.Kill(1), HasSubstr("[job 1 ended (killed)"));
}

}  // namespace
}  // namespace agent::daemon::tools
