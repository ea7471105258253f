#include "client/input/prompt_history.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::client {
namespace {

TEST(PromptHistoryTest, EntriesRoundTripWithNewlinesAndBackslashes) {
  for (std::string e : {"plain", "two\nlines", "back\\slash\\n", "cr\r", "\\"}) {
    std::string line = EncodeHistoryEntry(e);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(DecodeHistoryEntry(line), e);
  }
}

TEST(PromptHistoryTest, TwoWritersMergeInsteadOfOverwriting) {
  agent::testing::TempDir dir;
  PromptHistory a(dir.Join("h")), b(dir.Join("h"));
  ASSERT_TRUE(a.Append("from a").ok());
  ASSERT_TRUE(b.Append("from b").ok());
  ASSERT_TRUE(a.Append("two\nlines").ok());
  std::vector<std::string> want = {"from a", "from b", "two\nlines"};
  EXPECT_EQ(a.Load(), want);
  EXPECT_EQ(b.Load(), want);
  struct stat st;
  ASSERT_EQ(::stat(dir.Join("h").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(PromptHistoryTest, ConcurrentProcessesLoseNoEntry) {
  agent::testing::TempDir dir;
  const int kChildren = 4, kEach = 50;
  std::vector<pid_t> pids;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = ::fork();
    if (pid == 0) {
      PromptHistory h(dir.Join("h"), 1000);
      for (int i = 0; i < kEach; ++i) (void)h.Append(std::to_string(c) + "-" + std::to_string(i));
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t p : pids) ::waitpid(p, nullptr, 0);
  EXPECT_EQ(PromptHistory(dir.Join("h"), 1000).Load().size(), size_t{kChildren * kEach});
}

TEST(PromptHistoryTest, KeepsTheNewestAndCollapsesRepeats) {
  agent::testing::TempDir dir;
  PromptHistory h(dir.Join("h"), 3);
  for (std::string e : {"1", "2", "3", "4", "5", "6", "7"}) ASSERT_TRUE(h.Append(e).ok());
  EXPECT_EQ(h.Load(), (std::vector<std::string>{"5", "6", "7"}));
  // The file was rewritten past twice the limit, not left to grow.
  std::string text = agent::testing::ReadFile(dir.Join("h"));
  EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 6);
  ASSERT_TRUE(h.Append("7").ok());
  EXPECT_EQ(h.Load(), (std::vector<std::string>{"5", "6", "7"}));
}

}  // namespace
}  // namespace agent::client
