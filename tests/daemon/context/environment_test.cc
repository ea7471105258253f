#include "daemon/context/environment.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::context {
namespace {

using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::HasSubstr;

bool HaveGit() { return std::system("git --version >/dev/null 2>&1") == 0; }

int Sh(const std::string& cmd) { return std::system(cmd.c_str()); }

TEST(GitFactsTest, BranchFromHeadWithoutRunningGit) {
  TempDir d;
  WriteFile(d.Join(".git/HEAD"), "ref: refs/heads/feature/x\n");
  std::filesystem::create_directories(d.Join("src/deep"));
  GitFacts g = ReadGitFacts(d.Join("src/deep"), /*count_changes=*/false);
  EXPECT_TRUE(g.is_repo);
  EXPECT_EQ(g.branch, "feature/x");
  EXPECT_EQ(g.changed_files, -1);
}

TEST(GitFactsTest, DetachedHeadAndWorktreeFile) {
  TempDir d;
  WriteFile(d.Join("real/HEAD"), "0123456789abcdef0123456789abcdef01234567\n");
  WriteFile(d.Join("wt/.git"), "gitdir: ../real\n");
  GitFacts g = ReadGitFacts(d.Join("wt"), false);
  EXPECT_TRUE(g.is_repo);
  EXPECT_EQ(g.branch, "detached at 0123456");
}

TEST(GitFactsTest, NotARepository) {
  TempDir d;
  EXPECT_FALSE(ReadGitFacts(d.path(), false).is_repo);
}

TEST(GitFactsTest, CountsChangedFiles) {
  if (!HaveGit()) GTEST_SKIP() << "no git";
  TempDir d;
  ASSERT_EQ(Sh("cd " + d.path() +
               " && git init -q -b main . && git config user.email a@b && "
               "git config user.name a && echo a > a && git add a && git commit -qm a"),
            0);
  WriteFile(d.Join("a"), "changed\n");
  WriteFile(d.Join("new"), "new\n");
  GitFacts g = ReadGitFacts(d.path());
  EXPECT_EQ(g.branch, "main");
  EXPECT_EQ(g.changed_files, 2);
}

// A repository whose config names a program (a clean filter) is not asked: git status could
// run it.
TEST(GitFactsTest, ConfigWithFiltersIsNotRun) {
  if (!HaveGit()) GTEST_SKIP() << "no git";
  TempDir d;
  ASSERT_EQ(Sh("cd " + d.path() +
               " && git init -q -b main . && git config user.email a@b && "
               "git config user.name a && echo a > a && git add a && git commit -qm a"),
            0);
  const std::string marker = d.Join("ran");
  ASSERT_EQ(Sh("cd " + d.path() + " && git config filter.evil.clean 'touch " + marker +
               "; cat' && echo 'a filter=evil' > .gitattributes && echo b > a"),
            0);
  GitFacts g = ReadGitFacts(d.path());
  EXPECT_TRUE(g.is_repo);
  EXPECT_EQ(g.changed_files, -1);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(GitFactsTest, FsmonitorIsNotRun) {
  if (!HaveGit()) GTEST_SKIP() << "no git";
  TempDir d;
  const std::string marker = d.Join("ran");
  ASSERT_EQ(Sh("cd " + d.path() + " && git init -q -b main . && git config core.fsmonitor 'touch " +
               marker + "; false'"),
            0);
  GitFacts g = ReadGitFacts(d.path());
  EXPECT_TRUE(g.is_repo);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(EnvironmentTest, RendersTheFacts) {
  EnvironmentFacts f;
  f.cwd = "/p/sub";
  f.project_root = "/p";
  f.os = "Linux 6.1";
  f.shell = "bash";
  f.date = "2026-12-01 (Tuesday)";
  f.git = {true, "main", 3};
  std::string s = RenderEnvironment(f);
  EXPECT_THAT(s, HasSubstr("Working directory: /p/sub"));
  EXPECT_THAT(s, HasSubstr("Project root: /p"));
  EXPECT_THAT(s, HasSubstr("OS: Linux 6.1; shell: bash; today: 2026-12-01"));
  EXPECT_THAT(s, HasSubstr("branch main, 3 changed or untracked files"));
  f.git = {};
  EXPECT_THAT(RenderEnvironment(f), HasSubstr("Not a git repository"));
}

}  // namespace
}  // namespace agent::daemon::context
