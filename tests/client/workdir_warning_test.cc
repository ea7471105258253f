#include "client/view/workdir_warning.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::HasSubstr;

TEST(WideWorkdirWarningTest, HomeAndRootWarnAProjectDoesNot) {
  EXPECT_THAT(WideWorkdirWarning("/tmp", "/tmp"),
              HasSubstr("the agent can read and change everything under /tmp"));
  EXPECT_THAT(WideWorkdirWarning("/tmp/", "/tmp"), HasSubstr("your home directory"));
  EXPECT_THAT(WideWorkdirWarning("/", "/tmp"), HasSubstr("under / (the whole file system)"));
  EXPECT_THAT(WideWorkdirWarning("/usr/..", ""), HasSubstr("under /"));
  EXPECT_EQ(WideWorkdirWarning("/tmp/project", "/tmp"), "");
  EXPECT_EQ(WideWorkdirWarning("/tmp", ""), "");
  EXPECT_EQ(WideWorkdirWarning("", "/tmp"), "");
}

}  // namespace
}  // namespace agent::client
