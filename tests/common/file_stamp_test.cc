#include "common/file_stamp.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::ReadFile;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;

// Sets a file's modification time to `seconds` after the epoch: two versions written within
// one tick of the clock would otherwise carry the same time.
void SetMtime(const std::string& path, time_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// Rewrites `path` in place (same inode), with a modification time of its own.
void Rewrite(const std::string& path, const std::string& text, time_t seconds) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  SetMtime(path, seconds);
}

class ReadOnChangeTest : public ::testing::Test {
 protected:
  std::string ReadIt() {
    return read_.Get({path_}, [&] {
      struct stat st;
      return ::stat(path_.c_str(), &st) == 0 ? ReadFile(path_) : std::string("(none)");
    });
  }
  TempDir dir_;
  const std::string path_ = dir_.Join("config.json");
  ReadOnChange<std::string> read_{0};  // no file is too young here
};

TEST_F(ReadOnChangeTest, AnUnchangedFileIsReadOnce) {
  WriteFile(path_, "one");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ReadIt(), "one");
  EXPECT_EQ(read_.reads(), 1);
}

TEST_F(ReadOnChangeTest, AFileRewrittenInPlaceIsReadAgainEvenAtTheSameSize) {
  WriteFile(path_, "one");
  SetMtime(path_, 1000);
  EXPECT_EQ(ReadIt(), "one");
  Rewrite(path_, "two", 2000);
  EXPECT_EQ(ReadIt(), "two");
  EXPECT_EQ(ReadIt(), "two");
  EXPECT_EQ(read_.reads(), 2);
}

TEST_F(ReadOnChangeTest, AFileReplacedUnderTheSameTimeIsReadAgain) {
  WriteFile(path_, "one");
  SetMtime(path_, 1000);
  EXPECT_EQ(ReadIt(), "one");
  WriteFile(dir_.Join("new"), "two");
  SetMtime(dir_.Join("new"), 1000);  // same size, same time: only the inode tells
  ASSERT_EQ(std::rename(dir_.Join("new").c_str(), path_.c_str()), 0);
  EXPECT_EQ(ReadIt(), "two");
}

TEST_F(ReadOnChangeTest, AFileThatAppearsOrGoesIsReadAgain) {
  EXPECT_EQ(ReadIt(), "(none)");
  EXPECT_EQ(ReadIt(), "(none)");
  WriteFile(path_, "one");
  EXPECT_EQ(ReadIt(), "one");
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  EXPECT_EQ(ReadIt(), "(none)");
  EXPECT_EQ(read_.reads(), 3);
}

TEST_F(ReadOnChangeTest, AYoungFileIsReadEveryTime) {
  ReadOnChange<std::string> careful;  // the daemon's setting
  WriteFile(path_, "one");
  int reads = 0;
  for (int i = 0; i < 3; ++i) {
    careful.Get({path_}, [&] {
      ++reads;
      return ReadFile(path_);
    });
  }
  EXPECT_EQ(reads, 3);  // written just now: a write to come may keep its time
}

TEST_F(ReadOnChangeTest, TheFilesAReadNamesAreWatchedToo) {
  const std::string agents = dir_.Join("agents");
  const std::string def = agents + "/reviewer.md";
  WriteFile(def, "v1");
  SetMtime(def, 1000);
  auto list = [&] {
    return read_.Get({agents}, [&](std::vector<std::string>* also) {
      also->push_back(def);
      return ReadFile(def);
    });
  };
  EXPECT_EQ(list(), "v1");
  EXPECT_EQ(list(), "v1");
  Rewrite(def, "v2", 2000);  // the directory itself does not change
  EXPECT_EQ(list(), "v2");
  EXPECT_EQ(read_.reads(), 2);
}

TEST(ReadOnChangeByKeyTest, EachKeyHasItsOwnValue) {
  TempDir dir;
  WriteFile(dir.Join("a"), "A");
  WriteFile(dir.Join("b"), "B");
  ReadOnChangeByKey<std::string> read(0);
  int reads = 0;
  auto get = [&](const std::string& name) {
    return read.Get(name, {dir.Join(name)}, [&] {
      ++reads;
      return ReadFile(dir.Join(name));
    });
  };
  EXPECT_EQ(get("a"), "A");
  EXPECT_EQ(get("b"), "B");
  EXPECT_EQ(get("a"), "A");
  EXPECT_EQ(get("b"), "B");
  EXPECT_EQ(reads, 2);
}

}  // namespace
}  // namespace agent
