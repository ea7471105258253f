#include "daemon/tools/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/mutex.h"
#include "common/process_table.h"
#include "common/utf8.h"
#include "daemon/base/child_reaper.h"
#include "daemon/sandbox/sandbox.h"
#include "test_util.h"
#include "tests/fakes/fake_process_runner.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::ReadFile;
using ::agent::daemon::tools::testing::StatusIs;
using ::agent::daemon::tools::testing::TempDir;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

bool GroupGone(pid_t pgid) { return ::kill(-pgid, 0) == -1 && errno == ESRCH; }

int CountOpenFds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

class SubprocessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // As agentd does: orphaned grandchildren come back to us and are reaped at once.
    ASSERT_TRUE(daemon::BecomeChildSubreaper().ok());
  }
  SubprocessOptions Options(std::string command) {
    SubprocessOptions o;
    o.command = std::move(command);
    o.cwd = dir_.path();
    o.timeout = std::chrono::seconds(10);  // a safety net; no test should need it
    return o;
  }
  TempDir dir_;
};

// Fires once when the streamed output contains `needle`.
class OutputWatch {
 public:
  explicit OutputWatch(std::string needle) : needle_(std::move(needle)) {}
  void operator()(std::string_view chunk, bool) {
    agent::MutexLock lock(&mu_);
    seen_.append(chunk);
    if (!fired_ && seen_.find(needle_) != std::string::npos) {
      fired_ = true;
      note_.Notify();
    }
  }
  bool Wait() { return note_.WaitForNotificationWithTimeout(absl::Seconds(10)); }

 private:
  std::string needle_;
  agent::Mutex mu_;
  std::string seen_ ABSL_GUARDED_BY(mu_);
  bool fired_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification note_;
};

TEST_F(SubprocessTest, ReportsExitCodeAndOutput) {
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_THAT(r->output, HasSubstr("out\n"));
  EXPECT_THAT(r->output, HasSubstr("err\n"));
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->cancelled);
  EXPECT_EQ(r->omitted_bytes, 0u);
}

TEST_F(SubprocessTest, ReportsTheSignalThatKilledBash) {
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("kill -KILL $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->exited);
  EXPECT_EQ(r->term_signal, SIGKILL);
}

TEST_F(SubprocessTest, RunsInTheWorkdirWithStdinAtDevNull) {
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("pwd; cat; echo after-cat"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, dir_.path() + "\nafter-cat\n");
}

TEST_F(SubprocessTest, TheCommandStartsThroughTheProcessSeam) {
  agent::testing::FakeProcessRunner runner;
  runner.start = [](const ProcessSpec& asked) {
    return agent::testing::FakeProcessRunner::StandIn(asked, {"/bin/echo", "stand-in"});
  };
  SubprocessOptions o = Options("echo asked");
  o.env = {"ONLY=this"};
  o.runner = &runner;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->output, "stand-in\n");
  ASSERT_EQ(runner.starts().size(), 1u);
  const ProcessSpec asked = runner.starts()[0];
  EXPECT_EQ(asked.program, "/bin/bash");
  EXPECT_EQ(asked.argv, (std::vector<std::string>{"/bin/bash", "-c", "echo asked"}));
  EXPECT_EQ(asked.env, (std::vector<std::string>{"ONLY=this"}));
  EXPECT_EQ(asked.cwd, o.cwd);
  EXPECT_TRUE(asked.stdin_null);  // a command never sees a pipe to read
  runner.start = [](const ProcessSpec&) -> absl::StatusOr<StartedProcess> {
    return absl::NotFoundError("/bin/bash is not installed");
  };
  EXPECT_THAT(RunSubprocess(o), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(SubprocessTest, RunsInItsOwnProcessGroup) {
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("ps -o pgid= -p $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::stoi(r->output), r->pid);
  EXPECT_NE(r->pid, ::getpgrp());
}

TEST_F(SubprocessTest, MissingCwdIsAnError) {
  SubprocessOptions o = Options("true");
  o.cwd = dir_.Join("does-not-exist");
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(o.cwd));
}

TEST_F(SubprocessTest, StreamsStdoutAndStderrSeparately) {
  std::string out, err;
  SubprocessOptions o = Options("echo to-out; echo to-err >&2");
  o.on_output = [&](std::string_view chunk, bool is_stderr) {
    (is_stderr ? err : out).append(chunk);
  };
  ASSERT_TRUE(RunSubprocess(o).ok());
  EXPECT_EQ(out, "to-out\n");
  EXPECT_EQ(err, "to-err\n");
}

TEST_F(SubprocessTest, StreamingCallbackSeesOutputBeforeTheCommandExits) {
  // The command prints, then blocks on a fifo that only the test writes to: the callback
  // must have fired while the process is still blocked.
  const std::string fifo = dir_.Join("gate");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  OutputWatch watch("ready");
  SubprocessOptions o = Options("echo ready; read line < gate; echo got-$line");
  o.on_output = std::ref(watch);
  std::optional<absl::StatusOr<SubprocessResult>> result;
  std::atomic<bool> finished{false};
  std::thread runner([&] {
    result = RunSubprocess(o);
    finished = true;
  });
  bool saw_ready = watch.Wait();
  EXPECT_TRUE(saw_ready);
  EXPECT_FALSE(finished.load()) << "the command cannot finish before the fifo is written";
  int fd = ::open(fifo.c_str(), O_WRONLY);  // bash holds the read end open by now or soon
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "go\n", 3), 3);
  ::close(fd);
  runner.join();
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_EQ((*result)->output, "ready\ngot-go\n");
  EXPECT_EQ((*result)->exit_code, 0);
}

TEST_F(SubprocessTest, CancelKillsTheWholeGroupPromptly) {
  std::atomic<bool> cancel{false};
  OutputWatch watch("started");
  SubprocessOptions o = Options("sleep 60 & echo started; sleep 60");
  o.timeout = std::chrono::seconds(30);
  o.cancelled = &cancel;
  o.on_output = std::ref(watch);
  std::optional<absl::StatusOr<SubprocessResult>> result;
  Clock::time_point returned;
  std::thread runner([&] {
    result = RunSubprocess(o);
    returned = Clock::now();
  });
  bool started = watch.Wait();
  Clock::time_point cancelled_at = Clock::now();
  cancel = true;
  runner.join();
  ASSERT_TRUE(started);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(returned - cancelled_at);
  std::printf("cancel returned after %lld ms\n", static_cast<long long>(ms.count()));
  EXPECT_LT(ms, std::chrono::seconds(1));
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_TRUE((*result)->cancelled);
  EXPECT_FALSE((*result)->timed_out);
  EXPECT_TRUE(GroupGone((*result)->pid)) << "a process of group " << (*result)->pid << " lives";
}

TEST_F(SubprocessTest, TimeoutKillsTheGroup) {
  SubprocessOptions o = Options("sleep 30 & sleep 30");
  o.timeout = std::chrono::milliseconds(200);
  Clock::time_point start = Clock::now();
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->cancelled);
  EXPECT_TRUE(GroupGone(r->pid));
}

TEST_F(SubprocessTest, SigtermIgnoringCommandIsKilledAfterTheGrace) {
  SubprocessOptions o = Options("trap '' TERM; echo armed; while :; do :; done");
  o.timeout = std::chrono::milliseconds(100);
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_TRUE(GroupGone(r->pid));
}

TEST_F(SubprocessTest, LeftoverBackgroundJobDoesNotHangTheTool) {
  Clock::time_point start = Clock::now();
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("sleep 60 & echo done"));
  ASSERT_TRUE(r.ok());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(r->output, "done\n");
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(GroupGone(r->pid)) << "the background sleep was left running";
}

// Dead or reaped: no /proc entry, or state Z.
bool ProcessDead(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

TEST_F(SubprocessTest, WithoutSubreaperLeftoversAreKilledAndNotWaitedForAsZombies) {
  // Orphans then go to init, which may take seconds to reap them; the tool must not wait
  // for that, only for them to be dead.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("sleep 60 & echo $!"));
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  ASSERT_TRUE(r.ok());
  std::printf("returned after %lld ms\n", static_cast<long long>(r->elapsed.count()));
  EXPECT_LT(r->elapsed, std::chrono::milliseconds(250));
  EXPECT_TRUE(ProcessDead(std::stoi(r->output)));
}

TEST_F(SubprocessTest, ProcessThatLeftTheGroupButHoldsThePipesIsNotWaitedFor) {
  // setsid puts the sleeper in a session of its own, out of reach of the group kill; it
  // keeps stdout open. The drain is bounded, so the tool returns anyway.
  const std::string pidfile = dir_.Join("escaped.pid");
  Clock::time_point start = Clock::now();
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options(
      "setsid sh -c 'echo $$ > escaped.tmp && mv escaped.tmp escaped.pid && exec sleep 30' & "
      "for i in $(seq 1000); do [ -s escaped.pid ] && break; sleep 0.01; done; echo bye"));
  ASSERT_TRUE(r.ok());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_THAT(r->output, HasSubstr("bye"));
  std::string pid_text = ReadFile(pidfile);
  ASSERT_FALSE(pid_text.empty());
  ::kill(std::stoi(pid_text), SIGKILL);  // clean up the escapee
}

TEST_F(SubprocessTest, OutputIsCappedToHeadAndTailWithTheOmittedCount) {
  SubprocessOptions o = Options("printf START; head -c 100000 /dev/zero | tr '\\0' x; printf END");
  o.head_bytes = 1024;
  o.tail_bytes = 1024;
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output_bytes, 100008u);
  EXPECT_EQ(r->omitted_bytes, 100008u - 2048u);
  EXPECT_THAT(r->output, StartsWith("STARTxxx"));
  EXPECT_THAT(r->output, EndsWith("xxxEND"));
  EXPECT_THAT(r->output, HasSubstr("\n… 97960 bytes omitted …\n"));
  EXPECT_LT(r->output.size(), 2200u);
}

TEST_F(SubprocessTest, ChildGetsDefaultSigpipeEvenWhenWeIgnoreIt) {
  // The daemon ignores SIGPIPE; `yes | head` must still end (yes dies of SIGPIPE).
  struct sigaction old_action, ignore = {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old_action);
  absl::StatusOr<SubprocessResult> r =
      RunSubprocess(Options("yes | head -n 2; echo status=${PIPESTATUS[0]}"));
  ::sigaction(SIGPIPE, &old_action, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->output, "y\ny\nstatus=141\n");
}

TEST_F(SubprocessTest, DoesNotLeakFileDescriptors) {
  int before = CountOpenFds();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(RunSubprocess(Options("echo hi; echo x >&2")).ok());
  SubprocessOptions o = Options("sleep 10");
  o.timeout = std::chrono::milliseconds(50);
  ASSERT_TRUE(RunSubprocess(o).ok());
  EXPECT_EQ(CountOpenFds(), before);
}

TEST_F(SubprocessTest, PipesAreNotInheritedByTheCommand) {
  // Only 0, 1, 2 (and the fd ls uses for the listing) are open in the child.
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("ls /proc/self/fd | wc -l"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::stoi(r->output), 4);
}

TEST_F(SubprocessTest, RunsWithExactlyTheGivenEnvironmentNotOurs) {
  ::setenv("AGENT_API_KEY", "sk-daemon-own", 1);
  SubprocessOptions o = Options("env");
  o.env = {"PATH=/usr/bin:/bin", "CLIENT_MARK=from-client"};
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  ::unsetenv("AGENT_API_KEY");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->output, HasSubstr("CLIENT_MARK=from-client\n"));
  EXPECT_THAT(r->output, HasSubstr("PATH=/usr/bin:/bin\n"));
  EXPECT_THAT(r->output, Not(HasSubstr("sk-daemon-own")));
}

TEST_F(SubprocessTest, WithoutAnEnvironmentGetsTheMinimalOneNeverOurs) {
  ::setenv("AGENT_API_KEY", "sk-daemon-own", 1);
  absl::StatusOr<SubprocessResult> r = RunSubprocess(Options("env"));
  ::unsetenv("AGENT_API_KEY");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->output, HasSubstr("PATH=/usr/local/bin:/usr/bin:/bin\n"));
  EXPECT_THAT(r->output, HasSubstr("HOME="));
  EXPECT_THAT(r->output, Not(HasSubstr("sk-daemon-own")));
}

TEST_F(SubprocessTest, InvalidUtf8BecomesReplacementCharactersInResultAndStream) {
  std::string streamed;
  bool chunks_valid = true;
  SubprocessOptions o = Options(R"(printf 'a\xffb\xc0\xafc\xed\xa0\x80d\xe2\x82')");
  o.on_output = [&](std::string_view chunk, bool) {
    chunks_valid = chunks_valid && IsValidUtf8(chunk);
    streamed.append(chunk);
  };
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string f(kReplacementChar);
  EXPECT_EQ(r->output, "a" + f + "b" + f + f + "c" + f + f + f + "d" + f);
  EXPECT_EQ(streamed, r->output);
  EXPECT_TRUE(chunks_valid);
  EXPECT_EQ(r->output_bytes, 12u);  // the bytes written, not the repaired text's
}

TEST_F(SubprocessTest, ACharacterSplitBetweenTwoReadsIsJoined) {
  // The command writes "x" and the first byte of "€", then waits on a fifo: the first read
  // surely ends inside the character.
  const std::string fifo = dir_.Join("gate");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  OutputWatch watch("x");
  std::vector<std::string> chunks;
  agent::Mutex mu;
  SubprocessOptions o = Options(R"(printf 'x\xe2'; read line < gate; printf '\x82\xacy')");
  o.on_output = [&](std::string_view chunk, bool is_stderr) {
    {
      agent::MutexLock l(&mu);
      chunks.emplace_back(chunk);
    }
    watch(chunk, is_stderr);
  };
  std::optional<absl::StatusOr<SubprocessResult>> result;
  std::thread runner([&] { result = RunSubprocess(o); });
  EXPECT_TRUE(watch.Wait());
  int fd = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "go\n", 3), 3);
  ::close(fd);
  runner.join();
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_EQ((*result)->output, "x€y");
  agent::MutexLock l(&mu);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.front(), "x");
}

TEST_F(SubprocessTest, StdoutAndStderrAreDecodedSeparately) {
  // Half a character on stdout, then stderr, then the rest: the halves still meet.
  absl::StatusOr<SubprocessResult> r =
      RunSubprocess(Options(R"(printf '\xe2'; printf 'E' >&2; printf '\x82\xac')"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->output, HasSubstr("€"));
  EXPECT_THAT(r->output, HasSubstr("E"));
  EXPECT_EQ(r->output.size(), 4u);
}

TEST_F(SubprocessTest, RandomBytesComeOutValid) {
  bool chunks_valid = true;
  SubprocessOptions o = Options("head -c 200000 /dev/urandom");
  o.on_output = [&](std::string_view chunk, bool) {
    chunks_valid = chunks_valid && IsValidUtf8(chunk);
  };
  absl::StatusOr<SubprocessResult> r = RunSubprocess(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(chunks_valid);
  EXPECT_TRUE(IsValidUtf8(r->output));
  EXPECT_EQ(r->output_bytes, 200000u);
  EXPECT_GT(r->omitted_bytes, 0u);
}

// This process's children that ended and that nothing reaped.
int ZombieChildren() {
  int n = 0;
  for (const ProcessEntry& p : ReadProcessTable()) {
    if (p.ppid == ::getpid() && p.state == 'Z') ++n;
  }
  return n;
}

TEST_F(SubprocessTest, SandboxedCommandsLeaveNoZombies) {
  // What earlier tests left (a setsid escapee they killed) is not this test's subject.
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  ASSERT_EQ(ZombieChildren(), 0);
  sandbox::SandboxPolicy policy;
  policy.bwrap = "/usr/bin/bwrap";
  sandbox::Sandbox box(policy);  // its probe runs bwrap too
  if (!box.Confines()) GTEST_SKIP() << box.Problem();
  // As the bash tool runs a confined command: bwrap exits without waiting for the sandbox's
  // init, which comes to us, the subreaper.
  auto run = [&](const std::string& command, std::chrono::milliseconds timeout) {
    SubprocessOptions o = Options(command);
    o.argv = box.Wrap({dir_.path(), dir_.path()}, o.command, false);
    o.env = sandbox::SandboxEnvironment(o.env);
    o.timeout = timeout;
    return RunSubprocess(o);
  };
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<SubprocessResult> r = run("echo " + std::to_string(i), std::chrono::seconds(10));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->output, std::to_string(i) + "\n");
  }
  absl::StatusOr<SubprocessResult> left = run("sleep 30 & echo left", std::chrono::seconds(10));
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(left->output, "left\n");
  absl::StatusOr<SubprocessResult> slow = run("sleep 30", std::chrono::milliseconds(200));
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_TRUE(slow->timed_out);
  EXPECT_EQ(ZombieChildren(), 0);
}

}  // namespace
}  // namespace agent::daemon::tools
