#include "common/dir_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::StatusIs;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(DirFd, OpenMakesAMissingDirectoryOnlyWhenAsked) {
  TempDir t;
  EXPECT_THAT(DirFd::Open(t.Join("a/b"), false),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(t.Join("a/b"))));
  auto d = DirFd::Open(t.Join("a/b"), true);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->path(), t.Join("a/b"));
  EXPECT_EQ(d->PathOf("x"), t.Join("a/b/x"));
}

TEST(DirFd, OpenFollowsASymlinkTheCallerChose) {
  TempDir t;
  ASSERT_EQ(::mkdir(t.Join("real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(t.Join("real").c_str(), t.Join("link").c_str()), 0);
  EXPECT_THAT(DirFd::Open(t.Join("link"), false), IsOk());
}

TEST(DirFd, OpenSubdirMakesItPrivatelyWhenAsked) {
  TempDir t;
  auto d = DirFd::Open(t.path(), false);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(d->OpenSubdir(".agent", false),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(t.Join(".agent"))));
  auto sub = d->OpenSubdir(".agent", true);
  ASSERT_THAT(sub, IsOk());
  EXPECT_EQ(sub->path(), t.Join(".agent"));
  struct stat st;
  ASSERT_EQ(::stat(t.Join(".agent").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_THAT(d->OpenSubdir(".agent", true), IsOk());  // an existing one is fine
}

TEST(DirFd, OpenSubdirRefusesASymlink) {
  TempDir t;
  TempDir elsewhere;
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), t.Join(".agent").c_str()), 0);
  auto d = DirFd::Open(t.path(), false);
  ASSERT_THAT(d, IsOk());
  for (bool create : {false, true}) {
    EXPECT_THAT(d->OpenSubdir(".agent", create),
                StatusIs(absl::StatusCode::kPermissionDenied,
                         AllOf(HasSubstr(t.Join(".agent")), HasSubstr("symbolic link"))));
  }
}

TEST(DirFd, OpenSubdirRefusesAFile) {
  TempDir t;
  WriteFile(t.Join(".agent"), "x");
  auto d = DirFd::Open(t.path(), false);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(d->OpenSubdir(".agent", true),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr(t.Join(".agent")), HasSubstr("not a directory"))));
}

TEST(DirFd, OpenSubdirRefusesAnotherUsersDirectory) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  TempDir t;
  ASSERT_EQ(::mkdir(t.Join(".agent").c_str(), 0755), 0);
  ASSERT_EQ(::chown(t.Join(".agent").c_str(), 65534, 65534), 0);
  auto d = DirFd::Open(t.path(), false);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(d->OpenSubdir(".agent", true),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr(t.Join(".agent")), HasSubstr("another user"))));
}

TEST(DirFd, OpenFileOpensOnlyRegularFilesWithoutFollowingLinks) {
  TempDir t;
  TempDir elsewhere;
  WriteFile(elsewhere.Join("victim"), "precious");
  ASSERT_EQ(::symlink(elsewhere.Join("victim").c_str(), t.Join("link").c_str()), 0);
  ASSERT_EQ(::mkdir(t.Join("dir").c_str(), 0700), 0);
  auto d = DirFd::Open(t.path(), false);
  ASSERT_THAT(d, IsOk());
  auto fd = d->OpenFile("new", O_RDWR | O_CREAT);
  ASSERT_THAT(fd, IsOk());
  ::close(*fd);
  EXPECT_THAT(d->OpenFile("link", O_RDWR | O_CREAT),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(t.Join("link"))));
  EXPECT_THAT(d->OpenFile("dir", O_RDONLY),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(t.Join("dir"))));
  EXPECT_THAT(d->OpenFile("a/b", O_RDONLY), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CheckFileName, AcceptsOneComponentOnly) {
  EXPECT_THAT(CheckFileName("abc.json"), IsOk());
  EXPECT_THAT(CheckFileName("..x"), IsOk());
  for (const char* bad : {"", ".", "..", "a/b", "/abs", "../up"}) {
    EXPECT_THAT(CheckFileName(bad), StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
  }
}

}  // namespace
}  // namespace agent
