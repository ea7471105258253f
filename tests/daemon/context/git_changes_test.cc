#include "daemon/context/git_changes.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_process_runner.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::context {
namespace {

using ::agent::testing::FakeProcessRunner;
using ::testing::Contains;
using ::testing::HasSubstr;

TEST(GitChangesTest, CountsEachNameOnceFromWhatGitListed) {
  testing::TempDir work;
  FakeProcessRunner runner;
  // Staged a, changed a and b again, untracked dir/: three names, a counted once.
  runner.AnswerWith(FakeProcessRunner::Exited(0, std::string("a\0a\0b\0dir/\0", 11)));
  EXPECT_EQ(CountChangedFiles(work.path(), work.Join(".git"), runner), 3);
  ASSERT_EQ(runner.runs().size(), 1u);
  const ProcessSpec run = runner.runs()[0];
  EXPECT_EQ(run.program, "/bin/bash");
  EXPECT_EQ(run.cwd, work.path());
  // Never the user's or the system's git config, never a prompt, a private index.
  EXPECT_THAT(run.env, Contains("GIT_CONFIG_NOSYSTEM=1"));
  EXPECT_THAT(run.env, Contains("GIT_CONFIG_GLOBAL=/dev/null"));
  EXPECT_THAT(run.env, Contains("GIT_TERMINAL_PROMPT=0"));
  EXPECT_THAT(run.env, Contains(HasSubstr("GIT_INDEX_FILE=")));
  EXPECT_GT(run.timeout.count(), 0);
}

TEST(GitChangesTest, AFailureOrACutListIsUnknownNotAWrongCount) {
  testing::TempDir work;
  FakeProcessRunner runner;
  runner.AnswerWith(FakeProcessRunner::Exited(1, std::string("a\0", 2)));
  EXPECT_EQ(CountChangedFiles(work.path(), work.Join(".git"), runner), -1);
  ProcessResult cut = FakeProcessRunner::Exited(0, std::string("a\0", 2));
  cut.out_cut = true;
  runner.AnswerWith(cut);
  EXPECT_EQ(CountChangedFiles(work.path(), work.Join(".git"), runner), -1);
  runner.AnswerWith(absl::NotFoundError("/bin/bash is not installed"));
  EXPECT_EQ(CountChangedFiles(work.path(), work.Join(".git"), runner), -1);
}

}  // namespace
}  // namespace agent::daemon::context
