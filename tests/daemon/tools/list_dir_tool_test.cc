#include <unistd.h>

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::ToolTest;
using ::testing::HasSubstr;

using ListDirToolTest = ToolTest;

TEST_F(ListDirToolTest, SortedWithDirectoriesMarkedAndGitAndAgentSkipped) {
  Write("b.txt", "");
  Write("a.txt", "");
  Write("src/main.cc", "");
  Write(".git/HEAD", "");
  Write(".agent/sessions/x.json", "");
  Write(".gitignore", "a.txt\n");  // not applied by list_dir
  ASSERT_EQ(::symlink("b.txt", Path("z-link").c_str()), 0);
  ToolOutcome out = Call("list_dir", Json::object());
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, ".gitignore\na.txt\nb.txt\nsrc/\nz-link -> b.txt\n");
}

TEST_F(ListDirToolTest, ListsASubdirectory) {
  Write("src/x/y.cc", "");
  Write("src/a.cc", "");
  EXPECT_EQ(Call("list_dir", {{"path", "src"}}).content, "a.cc\nx/\n");
}

TEST_F(ListDirToolTest, EmptyDirectory) {
  Write("empty/.git/x", "");  // only skipped entries
  EXPECT_EQ(Call("list_dir", {{"path", "empty"}}).content, "(empty directory)\n");
}

TEST_F(ListDirToolTest, ErrorsForFilesMissingPathsAndOutside) {
  Write("f.txt", "");
  EXPECT_THAT(Call("list_dir", {{"path", "f.txt"}}).content, HasSubstr("not a directory"));
  EXPECT_THAT(Call("list_dir", {{"path", "nope"}}).content, HasSubstr("does not exist"));
  ToolOutcome out = Call("list_dir", {{"path", ".."}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("outside the project"));
}

TEST_F(ListDirToolTest, CapsTheNumberOfEntries) {
  for (int i = 0; i < 1005; ++i) Write("many/f" + std::to_string(10000 + i), "");
  ToolOutcome out = Call("list_dir", {{"path", "many"}});
  EXPECT_THAT(out.content, HasSubstr("… and 5 more entries\n"));
}

}  // namespace
}  // namespace agent::daemon::tools
