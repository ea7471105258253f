#include "daemon/tools/file_tracker.h"

#include <thread>
#include <vector>

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::StatusIs;
using ::agent::daemon::tools::testing::TempDir;
using ::agent::daemon::tools::testing::WriteFile;
using ::testing::HasSubstr;

TEST(FileTrackerTest, UnreadExistingFileNeedsARead) {
  TempDir dir;
  FileTracker t;
  WriteFile(dir.Join("a.txt"), "one");
  EXPECT_THAT(
      t.CheckUnchanged(dir.Join("a.txt"), true, "a.txt"),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("read a.txt before editing it")));
  EXPECT_TRUE(t.CheckUnchanged(dir.Join("a.txt"), false).ok());
}

TEST(FileTrackerTest, MissingFileHasNothingToLose) {
  TempDir dir;
  FileTracker t;
  EXPECT_TRUE(t.CheckUnchanged(dir.Join("none.txt"), true).ok());
}

TEST(FileTrackerTest, ChangeAfterReadIsRefused) {
  TempDir dir;
  FileTracker t;
  WriteFile(dir.Join("a.txt"), "one");
  t.RecordRead(dir.Join("a.txt"), "one");
  EXPECT_TRUE(t.CheckUnchanged(dir.Join("a.txt"), true).ok());
  WriteFile(dir.Join("a.txt"), "two");  // same size, other bytes
  EXPECT_THAT(t.CheckUnchanged(dir.Join("a.txt"), true, "a.txt"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("a.txt changed since you read it; read it again")));
}

TEST(FileTrackerTest, OwnWriteCountsAsKnown) {
  TempDir dir;
  FileTracker t;
  WriteFile(dir.Join("a.txt"), "new");
  t.RecordWrite(dir.Join("a.txt"), "new");
  EXPECT_TRUE(t.CheckUnchanged(dir.Join("a.txt"), true).ok());
  EXPECT_TRUE(t.HasSeen(dir.Join("a.txt")));
  t.Forget(dir.Join("a.txt"));
  EXPECT_FALSE(t.HasSeen(dir.Join("a.txt")));
}

TEST(FileTrackerTest, HashIsFnv1a64) {
  EXPECT_EQ(FileTracker::Hash(""), 14695981039346656037ull);
  EXPECT_EQ(FileTracker::Hash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_NE(FileTracker::Hash("ab"), FileTracker::Hash("ba"));
}

TEST(FileTrackerTest, ConcurrentReadsAreSafe) {
  FileTracker t;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&t, i] {
      for (int j = 0; j < 500; ++j)
        t.RecordRead("/p/" + std::to_string(j % 50), "c" + std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(t.HasSeen("/p/49"));
}

}  // namespace
}  // namespace agent::daemon::tools
