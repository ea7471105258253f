// Runs commands through BwrapArgv for real (skipped where bubblewrap cannot start): what the
// argv promises is what the kernel enforces. The world lives in the build tree, not /tmp,
// which the sandbox replaces, so hiding is tested by the hide list and not by the private /tmp.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/sandbox/bwrap_argv.h"
#include "daemon/sandbox/sandbox.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Ran {
  int status = -1;
  std::string output;
};

// argv with stdout and stderr in one pipe.
Ran RunArgv(std::vector<std::string> argv) {
  Ran r;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return r;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  char path[] = "PATH=/usr/bin:/bin";
  char* envp[] = {path, nullptr};
  pid_t pid;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return r;
  }
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) r.output.append(buf, n);
  ::close(fds[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

class BwrapRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = std::string(AGENT_BINARY_DIR) + "/bwrap_run_test.XXXXXX";
    root_ = fs::canonical(::mkdtemp(tmpl.data())).string();
    project_ = root_ + "/proj";
    fs::create_directories(project_ + "/.git/hooks");
    fs::create_directories(project_ + "/.agent");
    std::ofstream(project_ + "/.git/config") << "[core]\n";
    fs::create_directories(root_ + "/home/.ssh");
    std::ofstream(root_ + "/home/.ssh/id") << "SECRET-KEY\n";
    std::ofstream(root_ + "/home/.netrc") << "SECRET-NETRC\n";
    SandboxConfig config;
    policy_ =
        PolicyFromConfig(config, root_ + "/home", {root_ + "/state"}, root_ + "/run/d.sock", "");
    if (ProbeResult p = Probe(policy_); !p.available) GTEST_SKIP() << p.reason;
  }
  void TearDown() override { fs::remove_all(root_); }

  Ran In(const std::string& command) {
    return RunArgv(BwrapArgv(policy_, {project_, project_}, command));
  }

  std::string root_, project_;
  SandboxPolicy policy_;
};

TEST_F(BwrapRunTest, WritesOnlyInTheProject) {
  Ran in = In("echo x > made && cat made");
  EXPECT_EQ(in.status, 0) << in.output;
  EXPECT_TRUE(fs::exists(project_ + "/made"));
  Ran out = In("echo x > " + root_ + "/outside");
  // A build tree under /tmp is inside the sandbox's private /tmp: the write lands there.
  if (root_.rfind("/tmp/", 0) != 0 && root_.rfind("/var/tmp/", 0) != 0) {
    EXPECT_NE(out.status, 0);
    EXPECT_THAT(out.output, HasSubstr("Read-only file system"));
  }
  EXPECT_FALSE(fs::exists(root_ + "/outside"));
}

TEST_F(BwrapRunTest, ProtectedPathsAreReadOnly) {
  for (const char* target : {".git/hooks/pre-commit", ".git/config", ".agent/settings.json"}) {
    Ran r = In(std::string("echo evil > ") + target);
    EXPECT_NE(r.status, 0) << target;
    EXPECT_THAT(r.output, HasSubstr("Read-only file system")) << target;
  }
  EXPECT_NE(In("mv .agent moved").status, 0);
  EXPECT_TRUE(fs::is_directory(project_ + "/.agent"));
  EXPECT_FALSE(fs::exists(project_ + "/.git/hooks/pre-commit"));
}

TEST_F(BwrapRunTest, HiddenPathsShowNothing) {
  Ran r =
      In("cat " + root_ + "/home/.ssh/id " + root_ + "/home/.netrc; ls -a " + root_ + "/home/.ssh");
  EXPECT_THAT(r.output, Not(HasSubstr("SECRET")));
  EXPECT_THAT(r.output, HasSubstr("No such file"));
}

TEST_F(BwrapRunTest, NoNetworkNoHostProcessesNoNewPrivileges) {
  Ran net = In("exec 3<>/dev/tcp/127.0.0.1/9 && echo connected");
  EXPECT_THAT(net.output, Not(HasSubstr("connected")));
  Ran kill = In("kill -0 " + std::to_string(::getpid()));
  EXPECT_NE(kill.status, 0);
  EXPECT_THAT(kill.output, HasSubstr("No such process"));
  EXPECT_THAT(In("grep NoNewPrivs /proc/self/status").output, HasSubstr("1"));
}

TEST_F(BwrapRunTest, AServerStaysInTheCallersProcessGroup) {
  // own_session=false (MCP servers): no --new-session, so killing the group reaches it.
  Ran r = RunArgv([&] {
    std::vector<std::string> a = BwrapOptions(policy_, {project_, project_, false});
    a.insert(a.end(), {"--", "/bin/true"});
    return a;
  }());
  EXPECT_EQ(r.status, 0) << r.output;
}

}  // namespace
}  // namespace agent::daemon::sandbox
