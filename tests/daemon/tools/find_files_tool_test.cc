#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::ToolTest;
using ::testing::HasSubstr;

class FindFilesToolTest : public ToolTest {
 protected:
  FindFilesToolTest() {
    Write("main.cc", "");
    Write("src/a.cc", "");
    Write("src/a.h", "");
    Write("src/deep/b.cc", "");
    Write("build/gen.cc", "");
    Write("debug.log", "");
    Write("keep.log", "");
    Write("only_root.txt", "");
    Write("sub/only_root.txt", "");
    Write("sub/local.txt", "");
    Write("sub/x.cc", "");
    Write(".git/objects/o.cc", "");
    Write(".agent/a.cc", "");
    Write(".gitignore", "# build output\nbuild/\n*.log\n!keep.log\n/only_root.txt\n");
    Write("sub/.gitignore", "local.txt\n");
  }
};

TEST_F(FindFilesToolTest, PatternWithoutSlashMatchesNamesAtAnyDepth) {
  ToolOutcome out = Call("find_files", {{"pattern", "*.cc"}});
  EXPECT_FALSE(out.is_error) << out.content;
  // build/ is ignored, .git/ and .agent/ skipped; sorted.
  EXPECT_EQ(out.content, "main.cc\nsrc/a.cc\nsrc/deep/b.cc\nsub/x.cc\n");
}

TEST_F(FindFilesToolTest, DoubleStarAndBraces) {
  EXPECT_EQ(Call("find_files", {{"pattern", "src/**/*.{cc,h}"}}).content,
            "src/a.cc\nsrc/a.h\nsrc/deep/b.cc\n");
}

TEST_F(FindFilesToolTest, GitignoreNegationAnchoringAndNestedFiles) {
  EXPECT_EQ(Call("find_files", {{"pattern", "*.log"}}).content, "keep.log\n");
  EXPECT_EQ(Call("find_files", {{"pattern", "*.txt"}}).content, "sub/only_root.txt\n");
}

TEST_F(FindFilesToolTest, PathNarrowsTheSearchAndPatternIsRelativeToIt) {
  EXPECT_EQ(Call("find_files", {{"pattern", "deep/*.cc"}, {"path", "src"}}).content,
            "src/deep/b.cc\n");
  // The root .gitignore still applies below the start.
  Write("src/trace.log", "");
  EXPECT_EQ(Call("find_files", {{"pattern", "*.log"}, {"path", "src"}}).content,
            "No files match *.log\n");
}

TEST_F(FindFilesToolTest, NoMatchAndRefusals) {
  EXPECT_EQ(Call("find_files", {{"pattern", "*.rs"}}).content, "No files match *.rs\n");
  EXPECT_TRUE(Call("find_files", Json::object()).is_error);
  ToolOutcome out = Call("find_files", {{"pattern", "*"}, {"path", "../"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("outside the project"));
}

TEST_F(FindFilesToolTest, ResultsAreCappedWithACount) {
  for (int i = 0; i < 520; ++i) Write("gen/f" + std::to_string(1000 + i) + ".py", "");
  ToolOutcome out = Call("find_files", {{"pattern", "*.py"}});
  EXPECT_THAT(out.content, HasSubstr("gen/f1000.py\n"));
  EXPECT_THAT(out.content, HasSubstr("… and 20 more files"));
}

}  // namespace
}  // namespace agent::daemon::tools
