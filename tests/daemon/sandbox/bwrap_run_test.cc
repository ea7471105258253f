// Runs commands through BwrapArgv for real (skipped where bubblewrap cannot start): what the
// argv promises is what the kernel enforces. The world lives in the build tree, not /tmp,
// which the sandbox replaces, so hiding is tested by the hide list and not by the private /tmp.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
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

// Every file git reads as configuration or runs as a hook, in the repository, its linked work
// trees and its submodules, and in a repository nested anywhere in the tree: none is writable.
TEST_F(BwrapRunTest, NothingGitReadsAsConfigurationIsWritable) {
  fs::create_directories(project_ + "/.git/modules/sub");
  fs::create_directories(project_ + "/.git/worktrees/w");
  std::ofstream(project_ + "/.git/modules/sub/config") << "[core]\n";
  std::ofstream(project_ + "/.git/worktrees/w/commondir") << "../..\n";
  fs::create_directories(project_ + "/sub");
  std::ofstream(project_ + "/sub/.git") << "gitdir: ../.git/modules/sub\n";
  fs::create_directories(project_ + "/vendor/lib/.git/hooks");
  std::ofstream(project_ + "/vendor/lib/.git/config") << "[core]\n";
  // A `.git` file may name a directory anywhere, also one that is not called `.git`.
  fs::create_directories(project_ + "/alt");
  fs::create_directories(project_ + "/gitdirs/alt");
  std::ofstream(project_ + "/alt/.git") << "gitdir: ../gitdirs/alt\n";
  std::ofstream(project_ + "/gitdirs/alt/commondir") << "../common\n";
  fs::create_directories(project_ + "/gitdirs/common");
  for (const char* target :
       {".git/commondir", ".git/config.worktree", ".git/info/attributes", ".git/modules/sub/config",
        ".git/modules/sub/hooks/post-checkout", ".git/worktrees/w/config.worktree",
        ".git/worktrees/w/commondir", "sub/.git", "vendor/lib/.git/config",
        "vendor/lib/.git/hooks/pre-commit", ".git/objects/x", "gitdirs/alt/config",
        "gitdirs/common/config"}) {
    Ran r = In(std::string("mkdir -p $(dirname ") + target + ") && echo evil > " + target);
    EXPECT_NE(r.status, 0) << target;
    EXPECT_THAT(r.output, HasSubstr("Read-only file system")) << target;
  }
  EXPECT_NE(In("rm -rf vendor/lib/.git").status, 0);
  EXPECT_NE(In("mv sub/.git sub/old").status, 0);
  EXPECT_TRUE(fs::exists(project_ + "/vendor/lib/.git/config"));
  std::ifstream gitfile(project_ + "/sub/.git");
  std::string line;
  std::getline(gitfile, line);
  EXPECT_EQ(line, "gitdir: ../.git/modules/sub");
  // The work tree itself stays writable beside them.
  EXPECT_EQ(In("echo ok > vendor/lib/file").status, 0);
}

// What git's configuration names in the work tree (husky's core.hooksPath, an included file,
// also from the user's own git configuration) and a bare repository's layout are read-only.
TEST_F(BwrapRunTest, WhatGitsConfigurationNamesAndBareLayoutsAreReadOnly) {
  std::ofstream(project_ + "/.git/config")
      << "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../shared.gitconfig\n";
  fs::create_directories(project_ + "/.husky");
  std::ofstream(project_ + "/.husky/pre-commit") << "npm test\n";
  std::ofstream(project_ + "/shared.gitconfig") << "[includeIf \"onbranch:main\"]\n\tpath = more\n";
  std::ofstream(project_ + "/more") << "";
  fs::create_directories(project_ + "/fixtures/bare/objects");
  fs::create_directories(project_ + "/fixtures/bare/refs");
  std::ofstream(project_ + "/fixtures/bare/HEAD") << "ref: refs/heads/main\n";
  std::ofstream(project_ + "/fixtures/bare/config") << "[core]\n\tbare = true\n";
  fs::create_directories(root_ + "/home");
  std::ofstream(root_ + "/home/.gitconfig") << "[core]\n\thooksPath = githooks\n";
  fs::create_directories(project_ + "/githooks");
  GitEntries before = FindGitEntries(project_);
  for (const char* target : {".husky/pre-commit", "shared.gitconfig", "more",
                             "fixtures/bare/config", "githooks/post-checkout"}) {
    SandboxTarget target_of{project_, project_};
    // The user's configuration is found through $HOME, as the daemon's is.
    const char* home = std::getenv("HOME");
    const std::string saved = home == nullptr ? "" : home;
    ::setenv("HOME", (root_ + "/home").c_str(), 1);
    Ran r = RunArgv(BwrapArgv(policy_, target_of, std::string("echo evil > ") + target));
    if (home != nullptr) ::setenv("HOME", saved.c_str(), 1);
    EXPECT_NE(r.status, 0) << target;
    EXPECT_THAT(r.output, HasSubstr("Read-only file system")) << target;
  }
  // A bare layout made anew is set aside: its HEAD renamed, so git no longer takes it.
  Ran r =
      In("mkdir -p pkg/objects pkg/refs && echo 'ref: refs/heads/x' > pkg/HEAD && "
         "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > pkg/config");
  ASSERT_EQ(r.status, 0) << r.output;
  SetAside s = SetAsideNewGitEntries(project_, before);
  EXPECT_EQ(s.moved, (std::vector<std::string>{"pkg/HEAD"}));
  EXPECT_FALSE(fs::exists(project_ + "/pkg/HEAD"));
}

// A `.git` the command makes anew (a directory or a file, at any depth, or at the top of a
// work tree that is not the repository's) is set aside once it ended, so git never finds it.
TEST_F(BwrapRunTest, AGitTheCommandMadeIsSetAsideAfterIt) {
  GitEntries before = FindGitEntries(project_);
  SandboxTarget target{project_, project_};
  target.git = &before;
  const std::string planted = root_ + "/planted-ran";
  Ran r = RunArgv(BwrapArgv(
      policy_, target,
      "mkdir -p deep/x/.git/objects deep/x/.git/refs && echo 'ref: refs/heads/main' > "
      "deep/x/.git/HEAD && printf '[core]\\n\\tfsmonitor = touch " +
          planted +
          "\\n' > deep/x/.git/config && mkdir -p y && echo 'gitdir: ../deep/x/.git' > y/.git"));
  ASSERT_EQ(r.status, 0) << r.output;
  const bool git = ::access("/usr/bin/git", X_OK) == 0;
  auto person_runs_git_status = [&] {
    return RunArgv({"/usr/bin/env", "GIT_CEILING_DIRECTORIES=" + root_, "/usr/bin/git", "-C",
                    project_ + "/deep/x", "status"});
  };
  if (git) {  // what the person's next `git status` there would do
    person_runs_git_status();
    EXPECT_TRUE(fs::exists(planted));
    fs::remove(planted);
  }
  SetAside set_aside = SetAsideNewGitEntries(project_, before);
  EXPECT_EQ(set_aside.moved, (std::vector<std::string>{"deep/x/.git", "y/.git"}));
  EXPECT_TRUE(set_aside.failed.empty());
  EXPECT_FALSE(set_aside.incomplete);
  EXPECT_FALSE(fs::exists(project_ + "/deep/x/.git"));
  EXPECT_FALSE(fs::exists(project_ + "/y/.git"));
  size_t aside = 0;
  for (const auto& e : fs::directory_iterator(project_ + "/deep/x")) {
    aside += e.path().filename().string().starts_with(".git.made-in-sandbox-") &&
             fs::exists(e.path() / "config");
  }
  EXPECT_EQ(aside, 1u);
  EXPECT_THAT(SetAsideNote(set_aside), HasSubstr("deep/x/.git, y/.git"));
  // What was there before stays where it was.
  EXPECT_TRUE(fs::exists(project_ + "/.git/config"));
  EXPECT_TRUE(SetAsideNewGitEntries(project_, FindGitEntries(project_)).moved.empty());
  // The person's git in that directory no longer runs the planted command.
  if (git) {
    Ran status = person_runs_git_status();
    EXPECT_FALSE(fs::exists(planted)) << status.output;
  }
}

// A `.git` replaced under its old name is new; the names an attacker takes first do not keep
// one from being set aside; a directory the walk cannot read makes it say it is not whole.
TEST_F(BwrapRunTest, AGitSwappedUnderItsNameOrBehindTakenNamesIsStillSetAside) {
  // A `.git` that is a symlink to outside the tree is not bound (nothing there is writable):
  // the command can swap it for another link, which may even reuse the freed inode number.
  fs::create_directories(project_ + "/vendor");
  fs::create_symlink(root_ + "/elsewhere", project_ + "/vendor/.git");
  GitEntries before = FindGitEntries(project_);
  Ran swap = In("rm vendor/.git && ln -s other vendor/.git");
  ASSERT_EQ(swap.status, 0) << swap.output;
  fs::create_directories(project_ + "/taken");
  for (int i = 0; i < 120; ++i) {
    std::ofstream(project_ + "/taken/.git.made-in-sandbox-" + std::to_string(i)) << "";
  }
  std::ofstream(project_ + "/taken/.git.made-in-sandbox") << "";
  fs::create_directories(project_ + "/taken/.git");
  SetAside s = SetAsideNewGitEntries(project_, before);
  EXPECT_EQ(s.moved, (std::vector<std::string>{"taken/.git", "vendor/.git"}));
  EXPECT_FALSE(fs::exists(project_ + "/taken/.git"));
  // An unreadable directory (as the user; root reads it anyway).
  if (::geteuid() != 0) {
    fs::create_directories(project_ + "/locked/sub");
    fs::permissions(project_ + "/locked", fs::perms::owner_exec);
    EXPECT_FALSE(FindGitEntries(project_).complete);
    EXPECT_THAT(SetAsideNote(SetAsideNewGitEntries(project_, FindGitEntries(project_))),
                HasSubstr("not guarded"));
    fs::permissions(project_ + "/locked", fs::perms::owner_all);
  }
  EXPECT_FALSE(FindGitEntries(project_, /*max_entries=*/3).complete);
}

// A `.git` file naming a FIFO's directory, or a huge line, does not hang or swell the daemon.
TEST_F(BwrapRunTest, AGitFileIsReadBoundedAndNeverFromAFifo) {
  fs::create_directories(project_ + "/x");
  fs::create_directories(project_ + "/d");
  std::ofstream(project_ + "/x/.git") << "gitdir: ../d\n";
  ASSERT_EQ(::mkfifo((project_ + "/d/commondir").c_str(), 0600), 0);
  fs::create_directories(project_ + "/big");
  std::ofstream(project_ + "/big/.git") << "gitdir: " << std::string(1 << 20, 'a') << "\n";
  std::vector<std::string> paths = GitControlPaths(FindGitEntries(project_), project_, {});
  EXPECT_NE(std::find(paths.begin(), paths.end(), project_ + "/d"), paths.end());
  EXPECT_EQ(std::find(paths.begin(), paths.end(), project_ + "/big/" + std::string(1 << 20, 'a')),
            paths.end());
}

TEST_F(BwrapRunTest, HiddenPathsShowNothing) {
  Ran r =
      In("cat " + root_ + "/home/.ssh/id " + root_ + "/home/.netrc; ls -a " + root_ + "/home/.ssh");
  EXPECT_THAT(r.output, Not(HasSubstr("SECRET")));
  EXPECT_THAT(r.output, HasSubstr("No such file"));
}

// Each secret of the default list, planted where its program keeps it (a file, or a file in
// the directory that is hidden whole), is unreadable; `sandbox_show` brings back one path and
// only that one.
TEST_F(BwrapRunTest, EverySecretOfTheDefaultListIsHiddenAndShowTakesOneOff) {
  const std::string home = root_ + "/home";
  const std::vector<std::string> secrets = {".config/gh/hosts.yml",
                                            ".config/git/credentials",
                                            ".npmrc",
                                            ".pypirc",
                                            ".cargo/credentials.toml",
                                            ".pgpass",
                                            ".vault-token",
                                            ".gem/credentials",
                                            ".terraform.d/credentials.tfrc.json",
                                            ".m2/settings.xml",
                                            ".my.cnf",
                                            ".local/share/keyrings/login.keyring",
                                            ".bash_history",
                                            ".zsh_history",
                                            ".local/share/fish/fish_history",
                                            ".python_history",
                                            ".psql_history",
                                            ".aws/credentials",
                                            ".docker/config.json",
                                            ".git-credentials",
                                            ".kube/config"};
  for (const std::string& s : secrets) {
    fs::create_directories(fs::path(home + "/" + s).parent_path());
    std::ofstream(home + "/" + s) << "SECRET " << s << "\n";
  }
  policy_ = PolicyFromConfig(SandboxConfig{}, home, {}, "", "");
  for (const std::string& s : secrets) {
    Ran r = In("cat " + home + "/" + s);
    EXPECT_THAT(r.output, Not(HasSubstr("SECRET"))) << s;
  }
  SandboxConfig config;
  config.show = {"~/.npmrc"};
  policy_ = PolicyFromConfig(config, home, {}, "", "");
  EXPECT_THAT(In("cat " + home + "/.npmrc").output, HasSubstr("SECRET .npmrc"));
  EXPECT_THAT(In("cat " + home + "/.pypirc " + home + "/.config/gh/hosts.yml").output,
              Not(HasSubstr("SECRET")));
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
