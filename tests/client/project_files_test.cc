#include "client/input/project_files.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::client {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

int Shell(const std::string& cmd) { return std::system(cmd.c_str()); }

TEST(ProjectFilesTest, GitListsTrackedAndUntrackedButNotIgnoredFiles) {
  agent::testing::TempDir dir;
  ASSERT_EQ(Shell("git init -q " + dir.path()), 0);
  agent::testing::WriteFile(dir.Join(".gitignore"), "build/\n");
  agent::testing::WriteFile(dir.Join("src/a.cc"), "x");
  agent::testing::WriteFile(dir.Join("build/a.o"), "x");
  agent::testing::WriteFile(dir.Join(".agent/sessions/s.json"), "x");
  std::vector<std::string> files;
  ASSERT_TRUE(GitLsFiles(dir.path(), {}, &files));
  EXPECT_TRUE(Has(files, "src/a.cc"));
  EXPECT_TRUE(Has(files, ".gitignore"));
  EXPECT_FALSE(Has(files, "build/a.o"));
  EXPECT_FALSE(Has(files, ".agent/sessions/s.json"));  // transcripts are never candidates
}

TEST(ProjectFilesTest, TheRepositorysConfigRunsNoProgram) {
  agent::testing::TempDir dir;
  ASSERT_EQ(Shell("git init -q " + dir.path()), 0);
  // core.fsmonitor names a program git runs when it looks at the work tree.
  std::string pwned = dir.Join("pwned");
  agent::testing::WriteFile(
      dir.Join(".git/config"),
      "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch " + pwned + "; false\n");
  agent::testing::WriteFile(dir.Join("a.txt"), "x");
  std::vector<std::string> files = ListProjectFiles(dir.path());
  EXPECT_TRUE(Has(files, "a.txt"));
  EXPECT_EQ(agent::testing::ReadFile(pwned), "<missing>");
}

TEST(ProjectFilesTest, WithoutGitTheWalkSkipsGitAndSessions) {
  agent::testing::TempDir dir;
  agent::testing::WriteFile(dir.Join("a/b.txt"), "x");
  agent::testing::WriteFile(dir.Join(".git/HEAD"), "x");
  agent::testing::WriteFile(dir.Join(".agent/sessions/s.json"), "x");
  agent::testing::WriteFile(dir.Join(".agent/settings.json"), "x");
  std::vector<std::string> files = WalkProjectFiles(dir.path(), {});
  EXPECT_TRUE(Has(files, "a/b.txt"));
  EXPECT_TRUE(Has(files, ".agent/settings.json"));
  EXPECT_FALSE(Has(files, ".git/HEAD"));
  EXPECT_FALSE(Has(files, ".agent/sessions/s.json"));
  // Not a repository: git fails and the walk answers.
  EXPECT_TRUE(Has(ListProjectFiles(dir.path()), "a/b.txt"));
}

TEST(ProjectFilesTest, BothWaysAreBoundedInCount) {
  agent::testing::TempDir dir;
  for (int i = 0; i < 30; ++i) agent::testing::WriteFile(dir.Join("f" + std::to_string(i)), "x");
  ProjectFilesLimits l;
  l.max_files = 10;
  EXPECT_EQ(WalkProjectFiles(dir.path(), l).size(), 10u);
  ASSERT_EQ(Shell("git init -q " + dir.path()), 0);
  std::vector<std::string> files;
  ASSERT_TRUE(GitLsFiles(dir.path(), l, &files));
  EXPECT_EQ(files.size(), 10u);
}

}  // namespace
}  // namespace agent::client
