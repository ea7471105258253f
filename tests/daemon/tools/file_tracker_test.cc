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

// What a session keeps in its meta file and a load takes in again: the same checks after.
TEST(FileTrackerTest, WhatItKnowsSurvivesARoundTripInsideTheProjectOnly) {
  TempDir dir;
  FileTracker t;
  WriteFile(dir.Join("a.txt"), "one");
  WriteFile(dir.Join("b.txt"), "one");
  t.RecordRead(dir.Join("a.txt"), "one");
  t.RecordRead(dir.Join("b.txt"), "one");
  t.RecordRead("/etc/hostname-elsewhere", "x");
  Json kept = t.ToJson();
  kept["/etc/planted"] = {{"hash", "0000000000000000"}, {"size", 0}};
  kept[dir.Join("bad.txt")] = {{"hash", "not hex"}, {"size", 1}};
  kept[dir.Join("worse.txt")] = "a string";
  FileTracker loaded;
  loaded.LoadJson(kept, dir.path());
  EXPECT_TRUE(loaded.HasSeen(dir.Join("a.txt")));
  EXPECT_FALSE(loaded.HasSeen("/etc/hostname-elsewhere"));
  EXPECT_FALSE(loaded.HasSeen("/etc/planted"));
  EXPECT_FALSE(loaded.HasSeen(dir.Join("bad.txt")));
  EXPECT_FALSE(loaded.HasSeen(dir.Join("worse.txt")));
  EXPECT_TRUE(loaded.CheckUnchanged(dir.Join("a.txt"), true).ok());
  WriteFile(dir.Join("b.txt"), "two");
  EXPECT_THAT(loaded.CheckUnchanged(dir.Join("b.txt"), true, "b.txt"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("changed since")));
  FileTracker nothing;
  nothing.LoadJson(Json::array(), dir.path());  // malformed: nothing taken, no crash
  EXPECT_FALSE(nothing.HasSeen(dir.Join("a.txt")));
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
