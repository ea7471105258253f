#include "daemon/sandbox/bwrap_argv.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "daemon/sandbox/sandbox.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::Not;

class BwrapArgvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bwrap_argv_test.XXXXXX";
    root_ = fs::canonical(::mkdtemp(tmpl)).string();
    project_ = root_ + "/proj";
    fs::create_directories(project_ + "/.git/hooks");
    fs::create_directories(project_ + "/.agent");
    std::ofstream(project_ + "/.git/config") << "[core]\n";
    fs::create_directories(root_ + "/home/.ssh");
    std::ofstream(root_ + "/home/.netrc") << "machine x\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  // Whether `a`, `b`, `c` appear in argv as consecutive words.
  static bool HasTriple(const std::vector<std::string>& argv, const std::string& a,
                        const std::string& b, const std::string& c) {
    for (size_t i = 0; i + 2 < argv.size(); ++i) {
      if (argv[i] == a && argv[i + 1] == b && argv[i + 2] == c) return true;
    }
    return false;
  }
  static size_t IndexOf(const std::vector<std::string>& argv, const std::string& word) {
    return static_cast<size_t>(std::find(argv.begin(), argv.end(), word) - argv.begin());
  }

  SandboxPolicy Policy() {
    SandboxConfig config;
    return PolicyFromConfig(config, root_ + "/home", {root_ + "/config"}, root_ + "/sock/a.sock",
                            "");
  }

  std::string root_, project_;
};

TEST_F(BwrapArgvTest, WorkspaceWriteBindsTheProjectAndProtectsGitAndAgent) {
  std::vector<std::string> argv = BwrapArgv(Policy(), {project_, project_}, "make");
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", "/", "/"));
  EXPECT_TRUE(HasTriple(argv, "--bind", project_, project_));
  // All of .git, not only its hooks and config (bwrap_run_test tries each file).
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", project_ + "/.git", project_ + "/.git"));
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", project_ + "/.agent", project_ + "/.agent"));
  // The protection comes after the writable bind, or the bind would cover it.
  EXPECT_LT(IndexOf(argv, "--bind"), IndexOf(argv, project_ + "/.agent"));
  for (const char* flag : {"--unshare-all", "--new-session", "--die-with-parent"}) {
    EXPECT_THAT(argv, Contains(flag));
  }
  EXPECT_THAT(argv, Not(Contains("--share-net")));
  EXPECT_TRUE(HasTriple(argv, "--cap-drop", "ALL", "--chdir"));
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[argv.size() - 4], "--");
  EXPECT_EQ(argv.back(), "make");
}

TEST_F(BwrapArgvTest, HiddenPathsThatExistAreCovered) {
  std::vector<std::string> argv = BwrapArgv(Policy(), {project_, project_}, "true");
  EXPECT_TRUE(HasTriple(argv, "--tmpfs", root_ + "/home/.ssh", "--remount-ro"));
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", "/dev/null", root_ + "/home/.netrc"));
  // A missing one is left alone: bwrap could not create its mount point on a read-only root.
  EXPECT_THAT(argv, Not(Contains(root_ + "/home/.aws")));
}

TEST_F(BwrapArgvTest, TheSocketDirectoryAndAgentDirsAreAlwaysHidden) {
  SandboxConfig config;
  config.hide = std::vector<std::string>{"~/.netrc"};
  SandboxPolicy p =
      PolicyFromConfig(config, root_ + "/home", {root_ + "/config"}, root_ + "/sock/a.sock", "");
  EXPECT_THAT(p.hide, Contains(root_ + "/home/.netrc"));
  EXPECT_THAT(p.hide, Contains(root_ + "/config"));
  EXPECT_THAT(p.hide, Contains(root_ + "/sock"));
  EXPECT_THAT(p.hide, Not(Contains(root_ + "/home/.ssh")));
}

TEST_F(BwrapArgvTest, ReadOnlyBindsTheProjectReadOnly) {
  SandboxPolicy p = Policy();
  p.mode = SandboxMode::kReadOnly;
  std::vector<std::string> argv = BwrapArgv(p, {project_, project_}, "true");
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", project_, project_));
  EXPECT_THAT(argv, Not(Contains("--bind")));
}

// Plan mode: a workspace-write policy, a command that may change nothing in the work tree.
TEST_F(BwrapArgvTest, AReadOnlyTargetBindsTheProjectReadOnlyWhateverThePolicy) {
  SandboxTarget target{project_, project_};
  target.read_only = true;
  std::vector<std::string> argv = BwrapArgv(Policy(), target, "true");
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", project_, project_));
  EXPECT_THAT(argv, Not(Contains("--bind")));
}

TEST_F(BwrapArgvTest, NetworkOptInSharesTheNetwork) {
  SandboxPolicy p = Policy();
  p.network = true;
  EXPECT_THAT(BwrapArgv(p, {project_, project_}, "true"), Contains("--share-net"));
}

TEST_F(BwrapArgvTest, AHiddenPathHoldingTheProjectIsNotCovered) {
  SandboxPolicy p = Policy();
  p.hide.push_back(root_);
  std::vector<std::string> argv = BwrapArgv(p, {project_, project_}, "true");
  EXPECT_FALSE(HasTriple(argv, "--tmpfs", root_, "--remount-ro"));
}

TEST_F(BwrapArgvTest, OnlyRegularFilesTheCommandLineNamesUnderTmpAreBound) {
  // root_ is under /tmp, which the sandbox replaces.
  fs::create_directories(root_ + "/tools/lib");
  std::ofstream(root_ + "/tools/server.py") << "print()\n";
  std::ofstream(project_ + "/inside.py") << "print()\n";
  fs::create_symlink(root_ + "/tools/server.py", root_ + "/tools/link.py");
  SandboxTarget t{project_, project_};
  t.readable = {root_ + "/tools/server.py", root_ + "/tools/lib", project_ + "/inside.py",
                root_ + "/tools/link.py",   "/etc/hostname",      "server.py",
                root_ + "/missing.py"};
  std::vector<std::string> argv = BwrapOptions(Policy(), t);
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", root_ + "/tools/server.py", root_ + "/tools/server.py"));
  // A symlink's target appears at the name the command line uses.
  EXPECT_TRUE(HasTriple(argv, "--ro-bind", root_ + "/tools/server.py", root_ + "/tools/link.py"));
  EXPECT_THAT(argv, Not(Contains(root_ + "/tools/lib")));     // a directory: never
  EXPECT_THAT(argv, Not(Contains(project_ + "/inside.py")));  // bound with the project
  EXPECT_THAT(argv, Not(Contains("/etc/hostname")));          // visible already
  EXPECT_THAT(argv, Not(Contains(root_ + "/missing.py")));
  // After the private /tmp, or it would cover them.
  EXPECT_LT(IndexOf(argv, "/tmp"), IndexOf(argv, root_ + "/tools/link.py"));
}

// The escalation hint follows only failures the sandbox plausibly caused.
TEST(SandboxPlausiblyRefusedTest, NamesTheSignalsAndIgnoresOrdinaryFailures) {
  SandboxPolicy p;
  p.hide = {"/home/u/.ssh"};
  const std::string w = "/home/u/proj";
  for (const char* ordinary :
       {"make: *** [Makefile:3: test] Error 1\n3 tests FAILED", "bash: ./run.sh: Permission denied",
        "cat: missing.txt: No such file or directory",
        "cp: cannot create regular file '/home/u/proj/out': Permission denied",
        "open /tmp/x: Permission denied"}) {
    EXPECT_FALSE(SandboxPlausiblyRefused(ordinary, p, w)) << ordinary;
  }
  for (const char* refused :
       {"bash: /var/outside.txt: Read-only file system",
        "touch: cannot touch '.git/config': Read-only file system",
        "cat: /home/u/.ssh/id_rsa: No such file or directory",
        "touch: cannot touch '/etc/x': Permission denied",
        "curl: (6) Could not resolve host: example.com",
        "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN"}) {
    EXPECT_TRUE(SandboxPlausiblyRefused(refused, p, w)) << refused;
  }
  p.network = true;
  EXPECT_FALSE(SandboxPlausiblyRefused("curl: (6) Could not resolve host: example.com", p, w));
}

TEST(SandboxEnvironmentTest, AgentSocketsAreNotPassed) {
  std::vector<std::string> env = SandboxEnvironment(
      {"PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "AGENT_SOCKET=/run/a.sock",
       "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus", "HOME=/root"});
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "HOME=/root"}));
}

TEST(SandboxTest, AMissingBwrapIsAProblemWithAFix) {
  SandboxPolicy p;
  p.bwrap = "/nonexistent/bwrap";
  Sandbox s(p);
  EXPECT_FALSE(s.Confines());
  EXPECT_THAT(s.Problem(), ::testing::HasSubstr("bubblewrap is not installed"));
  EXPECT_THAT(s.Problem(), ::testing::HasSubstr("apt-get install bubblewrap"));
  EXPECT_THAT(s.Describe(), ::testing::StartsWith("unavailable: "));
}

TEST(SandboxTest, OffIsNoProblemAndSaysSo) {
  SandboxPolicy p;
  p.mode = SandboxMode::kOff;
  p.bwrap = "/nonexistent/bwrap";
  Sandbox s(p);
  EXPECT_FALSE(s.Confines());
  EXPECT_EQ(s.Problem(), "");
  EXPECT_THAT(s.Describe(), ::testing::StartsWith("off"));
}

}  // namespace
}  // namespace agent::daemon::sandbox
