#include "common/append_only_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::ReadFile;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;

class AppendOnlyFileTest : public ::testing::Test {
 protected:
  absl::Status Append(const std::string& line) {
    return file_.Append(line, path_, [&]() -> absl::StatusOr<int> {
      ++opens_;
      const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) return absl::InternalError("open");
      return fd;
    });
  }
  TempDir dir_;
  const std::string path_ = dir_.Join("s.journal");
  AppendOnlyFile file_;
  int opens_ = 0;
};

TEST_F(AppendOnlyFileTest, AppendsGoThroughOneOpen) {
  for (int i = 0; i < 5; ++i) ASSERT_THAT(Append(std::to_string(i) + "\n"), IsOk());
  EXPECT_EQ(ReadFile(path_), "0\n1\n2\n3\n4\n");
  EXPECT_EQ(opens_, 1);
}

TEST_F(AppendOnlyFileTest, AFileReplacedByRenameIsOpenedAgain) {
  ASSERT_THAT(Append("old\n"), IsOk());
  WriteFile(dir_.Join("new"), "header\n");
  ASSERT_EQ(std::rename(dir_.Join("new").c_str(), path_.c_str()), 0);
  ASSERT_THAT(Append("next\n"), IsOk());
  EXPECT_EQ(ReadFile(path_), "header\nnext\n");  // not lost in the replaced inode
  EXPECT_EQ(opens_, 2);
}

TEST_F(AppendOnlyFileTest, ARemovedFileIsOpenedAgain) {
  ASSERT_THAT(Append("one\n"), IsOk());
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  ASSERT_THAT(Append("two\n"), IsOk());
  EXPECT_EQ(ReadFile(path_), "two\n");
}

TEST_F(AppendOnlyFileTest, CloseLetsTheOwnerReplaceTheFile) {
  ASSERT_THAT(Append("one\n"), IsOk());
  file_.Close();
  ASSERT_THAT(Append("two\n"), IsOk());
  EXPECT_EQ(opens_, 2);
  EXPECT_EQ(ReadFile(path_), "one\ntwo\n");
}

TEST_F(AppendOnlyFileTest, AFailedOpenIsReportedAndTriedAgain) {
  absl::Status s =
      file_.Append("x\n", path_, [] { return absl::StatusOr<int>(absl::NotFoundError("no dir")); });
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  ASSERT_THAT(Append("y\n"), IsOk());
  EXPECT_EQ(ReadFile(path_), "y\n");
}

}  // namespace
}  // namespace agent
