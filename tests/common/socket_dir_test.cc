#include "common/socket_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent {
namespace {

using ::testing::HasSubstr;

class SocketDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agt-trust-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { (void)std::system(("rm -rf " + root_).c_str()); }
  std::string root_;
};

TEST_F(SocketDirTest, PrivateDirectoryIsAccepted) {
  std::string dir = root_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_TRUE(CheckSocketDir(dir).ok());
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);  // readable is fine: only writing replaces sockets
  EXPECT_TRUE(CheckSocketDir(dir).ok());
}

TEST_F(SocketDirTest, WorldWritableDirectoryIsRefusedWithPathAndOwner) {
  std::string dir = root_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  absl::Status s = CheckSocketDir(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr(dir));
  EXPECT_THAT(std::string(s.message()), HasSubstr("0777"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("uid " + UidName(::getuid())));
  ASSERT_EQ(::chmod(dir.c_str(), 0770), 0);
  EXPECT_EQ(CheckSocketDir(dir).code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(SocketDirTest, SymlinkToPrivateDirectoryIsRefused) {
  std::string dir = root_ + "/d";
  std::string link = root_ + "/link";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(dir.c_str(), link.c_str()), 0);
  absl::Status s = CheckSocketDir(link);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("symlink"));
}

TEST_F(SocketDirTest, DirectoryOfAnotherUserIsRefused) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to chown a directory to nobody (65534)";
  std::string dir = root_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  absl::Status s = CheckSocketDir(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("owned by uid 65534"));
}

TEST_F(SocketDirTest, MissingDirectoryIsNotFound) {
  EXPECT_EQ(CheckSocketDir(root_ + "/none").code(), absl::StatusCode::kNotFound);
}

TEST_F(SocketDirTest, EnsureCreatesPrivateDirectoriesAndRefusesToFixAWrongOne) {
  std::string dir = root_ + "/a/b";
  ASSERT_TRUE(EnsureSocketDir(dir).ok());
  struct stat st;
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::lstat((root_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(EnsureSocketDir(dir).code(), absl::StatusCode::kPermissionDenied);
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0777u);  // refused, not silently repaired
}

}  // namespace
}  // namespace agent
