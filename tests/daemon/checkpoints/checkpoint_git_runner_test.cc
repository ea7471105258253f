// RunGit through the process seam: what runs (nothing of the user's or the project's git set-up
// can reach it) and what its ending becomes, without starting git.
#include <unistd.h>

#include <algorithm>

#include "daemon/checkpoints/git_runner.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_process_runner.h"

namespace agent::daemon::checkpoints {
namespace {

bool HasGit() { return ::access("/usr/bin/git", X_OK) == 0 || ::access("/bin/git", X_OK) == 0; }

TEST(GitRunnerTest, GitRunsInTheStoreWithOurSettingsOnly) {
  if (!HasGit()) GTEST_SKIP() << "no git";
  testing::FakeProcessRunner runner;
  runner.AnswerWith(testing::FakeProcessRunner::Exited(0, "tree\n"));
  auto out = RunGit({"/store", "/project", {"write-tree"}, "input"}, runner);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "tree\n");
  ASSERT_EQ(runner.runs().size(), 1u);
  const ProcessSpec spec = runner.runs()[0];
  EXPECT_EQ(spec.program[0], '/');  // never a search of PATH, which may name the project's git
  EXPECT_EQ(spec.argv.back(), "write-tree");
  auto hooks = std::find(spec.argv.begin(), spec.argv.end(), "core.hooksPath=/dev/null");
  ASSERT_NE(hooks, spec.argv.end());
  EXPECT_EQ(*(hooks - 1), "-c");
  EXPECT_EQ(spec.cwd, "/project");
  EXPECT_EQ(spec.env, GitEnvironment("/store", "/project"));
  EXPECT_EQ(spec.input, "input");
}

TEST(GitRunnerTest, AFailedCallNamesTheCommandAndGitsWordsCapped) {
  if (!HasGit()) GTEST_SKIP() << "no git";
  testing::FakeProcessRunner runner;
  runner.AnswerWith(
      testing::FakeProcessRunner::Exited(128, "", "fatal: " + std::string(5000, 'e')));
  auto out = RunGit({"/store", "/project", {"read-tree", "abc"}, ""}, runner);
  ASSERT_TRUE(absl::IsInternal(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("git read-tree abc failed: fatal: "), std::string::npos);
  EXPECT_LT(out.status().message().size(), 2100u);

  runner.AnswerWith(absl::NotFoundError("/usr/bin/git is not installed"));
  EXPECT_EQ(RunGit({"/store", "/project", {"status"}, ""}, runner).status().message(),
            "git is not installed");
}

}  // namespace
}  // namespace agent::daemon::checkpoints
