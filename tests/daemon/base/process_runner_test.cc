#include "daemon/base/process_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

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

// Everything `fd` gives until EOF.
std::string ReadAll(int fd) {
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  return all;
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST(ProcessRunnerTest, StartHandsOverPipesAndTheProgramLeadsItsGroup) {
  testing::TempDir dir;
  auto p = RealProcessRunner().Start(
      Spec({"/bin/sh", "-c", "read line; echo \"got $line\"; echo apart >&2"}, dir.path()));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(::getpgid(p->pid), p->pid);  // its own group: the caller can end it whole
  ASSERT_EQ(::write(p->in.get(), "hi\n", 3), 3);
  p->in.Close();
  EXPECT_EQ(ReadAll(p->out.get()), "got hi\n");
  EXPECT_EQ(ReadAll(p->err.get()), "apart\n");
  const int status = WaitFor(p->pid);
  EXPECT_TRUE(WIFEXITED(status));
}

TEST(ProcessRunnerTest, StartWithStdinNullGivesNoPipeToRead) {
  testing::TempDir dir;
  ProcessSpec spec =
      Spec({"/bin/sh", "-c", "test -p /dev/stdin && echo pipe || echo no-pipe"}, dir.path());
  spec.stdin_null = true;
  auto p = RealProcessRunner().Start(spec);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->in.open());
  EXPECT_EQ(ReadAll(p->out.get()), "no-pipe\n");
  WaitFor(p->pid);
}

TEST(ProcessRunnerTest, SignalsAreAtTheirDefaultsAndOnlyThreeDescriptorsPass) {
  testing::TempDir dir;
  // What the daemon ignores or blocks a program must not inherit: `yes | head` ends by SIGPIPE.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_pipe {};
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old_pipe), 0);
  sigset_t to_block, old_mask;
  sigemptyset(&to_block);
  sigaddset(&to_block, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &to_block, &old_mask), 0);
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: closefrom must stop it
  ASSERT_GE(leaked, 3);
  // The shell's own mask and ignored set, as it got them (an ignored signal stays ignored in
  // a shell); ls sees 0, 1, 2 and the directory it reads.
  auto r = RealProcessRunner().Run(
      Spec({"/bin/sh", "-c",
            "sed -n 's/^SigIgn:\\t/ignored /p; s/^SigBlk:\\t/blocked /p' /proc/$$/status; "
            "ls /proc/self/fd | wc -l"},
           dir.path()));
  ::close(leaked);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  unsigned long long ignored = ~0ull, blocked = ~0ull;
  int fds = -1;
  ASSERT_EQ(std::sscanf(r->out.c_str(), "blocked %llx ignored %llx %d", &blocked, &ignored, &fds),
            3)
      << r->out;
  EXPECT_EQ(ignored & (1ull << (SIGPIPE - 1)), 0u) << r->out;
  EXPECT_EQ(blocked & (1ull << (SIGTERM - 1)), 0u) << r->out;
  EXPECT_EQ(fds, 4) << r->out;
}

}  // namespace
}  // namespace agent::daemon
