#include "common/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::IsRegularFile;
using ::agent::testing::IsSymlink;
using ::agent::testing::ListDir;
using ::agent::testing::ReadFile;
using ::agent::testing::StatusIs;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class AtomicFileTest : public ::testing::Test {
 protected:
  // A file outside the directory the code writes in, which must never change.
  std::string Outside() {
    std::string p = outside_.Join("victim");
    WriteFile(p, "precious\n");
    return p;
  }
  TempDir dir_;
  TempDir outside_;
};

TEST_F(AtomicFileTest, WritesANewFileWithItsParentsPrivately) {
  std::string p = dir_.Join("a/b/c.json");
  ASSERT_THAT(WriteFileAtomically(p, "hello"), IsOk());
  EXPECT_EQ(ReadFile(p), "hello");
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_.Join("a/b").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_THAT(ListDir(dir_.Join("a/b")), ElementsAre("c.json"));  // no temp file left
}

TEST_F(AtomicFileTest, ReplacesTheContent) {
  std::string p = dir_.Join("f");
  WriteFile(p, "old content that is longer");
  ASSERT_THAT(WriteFileAtomically(p, "new", Durability::kUnsynced), IsOk());
  EXPECT_EQ(ReadFile(p), "new");
  EXPECT_THAT(ListDir(dir_.path()), ElementsAre("f"));
}

// A write that fails half way (here: the file size limit, as a full disk would) leaves the
// old file whole and no temp file behind.
TEST_F(AtomicFileTest, AFailedWriteLeavesTheOldContent) {
  std::string p = dir_.Join("f");
  WriteFile(p, "old");
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = WriteFileAtomically(p, std::string(4096, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, HasSubstr(dir_.Join("f.tmp."))));
  EXPECT_EQ(ReadFile(p), "old");
  EXPECT_THAT(ListDir(dir_.path()), ElementsAre("f"));
}

TEST_F(AtomicFileTest, AMissingDirectoryThatCannotBeMadeIsAnError) {
  WriteFile(dir_.Join("file"), "x");
  EXPECT_THAT(WriteFileAtomically(dir_.Join("file/sub/f"), "y"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr(dir_.Join("file"))));
}

TEST(TempFileName, IsTheNameWithSixteenRandomHexDigits) {
  std::string a = TempFileName("x.json");
  EXPECT_THAT(a, MatchesRegex("x\\.json\\.tmp\\.[0-9a-f]{16}"));
  EXPECT_NE(a, TempFileName("x.json"));
}

// The temp name used to be <path>.tmp.<pid>: a symlink planted there was written through.
TEST_F(AtomicFileTest, ASymlinkAtThePredictableTempNameIsNotWrittenThrough) {
  std::string victim = Outside();
  std::string p = dir_.Join("f.json");
  ASSERT_EQ(::symlink(victim.c_str(), absl::StrCat(p, ".tmp.", ::getpid()).c_str()), 0);
  ASSERT_THAT(WriteFileAtomically(p, "mine"), IsOk());
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_TRUE(IsRegularFile(p));
  EXPECT_EQ(ReadFile(p), "mine");
}

// By path, the caller chose the name: a symlink there is replaced, never written through.
TEST_F(AtomicFileTest, ByPathASymlinkTargetIsReplacedNotFollowed) {
  std::string victim = Outside();
  std::string p = dir_.Join("f.json");
  ASSERT_EQ(::symlink(victim.c_str(), p.c_str()), 0);
  ASSERT_THAT(WriteFileAtomically(p, "mine"), IsOk());
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_TRUE(IsRegularFile(p));
}

TEST_F(AtomicFileTest, InADirectoryASymlinkTargetIsRefusedAndLeftAlone) {
  std::string victim = Outside();
  ASSERT_EQ(::symlink(victim.c_str(), dir_.Join("f.json").c_str()), 0);
  auto d = DirFd::Open(dir_.path(), false);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(WriteFileAtomically(*d, "f.json", "mine"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(dir_.Join("f.json"))));
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_TRUE(IsSymlink(dir_.Join("f.json")));
  EXPECT_THAT(ListDir(dir_.path()), ElementsAre("f.json"));
}

TEST_F(AtomicFileTest, InADirectoryWritesAndReplaces) {
  auto d = DirFd::Open(dir_.path(), false);
  ASSERT_THAT(d, IsOk());
  ASSERT_THAT(WriteFileAtomically(*d, "f", "one"), IsOk());
  ASSERT_THAT(WriteFileAtomically(*d, "f", "two", Durability::kUnsynced), IsOk());
  EXPECT_EQ(ReadFile(dir_.Join("f")), "two");
  EXPECT_THAT(ListDir(dir_.path()), ElementsAre("f"));
  EXPECT_THAT(WriteFileAtomically(*d, "../f", "x"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(AtomicFileTest, AppendsAndCreates) {
  std::string p = dir_.Join("sub/log.jsonl");
  ASSERT_THAT(AppendToFile(p, "a\n"), IsOk());
  ASSERT_THAT(AppendToFile(p, "b\n"), IsOk());
  EXPECT_EQ(ReadFile(p), "a\nb\n");
  auto d = DirFd::Open(dir_.Join("sub"), false);
  ASSERT_THAT(d, IsOk());
  ASSERT_THAT(AppendToFile(*d, "log.jsonl", "c\n"), IsOk());
  EXPECT_EQ(ReadFile(p), "a\nb\nc\n");
}

TEST_F(AtomicFileTest, AppendDoesNotFollowASymlink) {
  std::string victim = Outside();
  std::string p = dir_.Join("log.jsonl");
  ASSERT_EQ(::symlink(victim.c_str(), p.c_str()), 0);
  EXPECT_THAT(AppendToFile(p, "line\n"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(p)));
  auto d = DirFd::Open(dir_.path(), false);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(AppendToFile(*d, "log.jsonl", "line\n"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(p)));
  EXPECT_EQ(ReadFile(victim), "precious\n");
}

TEST_F(AtomicFileTest, ReadsByPathAndInADirectory) {
  WriteFile(dir_.Join("f"), "content");
  auto by_path = ReadFileToString(dir_.Join("f"));
  ASSERT_THAT(by_path, IsOk());
  EXPECT_EQ(*by_path, "content");
  auto d = DirFd::Open(dir_.path(), false);
  ASSERT_THAT(d, IsOk());
  auto in_dir = ReadFileToString(*d, "f");
  ASSERT_THAT(in_dir, IsOk());
  EXPECT_EQ(*in_dir, "content");
  EXPECT_THAT(ReadFileToString(dir_.Join("none")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir_.Join("none"))));
  EXPECT_THAT(ReadFileToString(*d, "none"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir_.Join("none"))));
}

TEST_F(AtomicFileTest, InADirectoryReadsNoSymlinkAndNoFifo) {
  std::string victim = Outside();
  ASSERT_EQ(::symlink(victim.c_str(), dir_.Join("link").c_str()), 0);
  ASSERT_EQ(::mkfifo(dir_.Join("fifo").c_str(), 0600), 0);
  auto d = DirFd::Open(dir_.path(), false);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(ReadFileToString(*d, "link"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(dir_.Join("link"))));
  // Would block forever in open() without O_NONBLOCK.
  EXPECT_THAT(ReadFileToString(*d, "fifo"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(dir_.Join("fifo"))));
}

}  // namespace
}  // namespace agent
