#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::ToolTest;
using ::testing::HasSubstr;
using ::testing::Not;

class SearchToolTest : public ToolTest {
 protected:
  SearchToolTest() {
    Write("src/main.cc", "#include <x>\nint main() {\n  return 0;\n}\n");
    Write("src/util.py", "def main():\n    pass\n");
    Write("ignored/main.cc", "int main() {}\n");
    Write(".gitignore", "ignored/\n");
    Write(".git/config", "int main\n");
    Write(".agent/s.json", "int main\n");
    Write("bin.dat", std::string("int main\0", 9));
  }
};

TEST_F(SearchToolTest, PrintsPathLineAndText) {
  ToolOutcome out = Call("search", {{"pattern", "int main"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "src/main.cc:2: int main() {\n");
}

TEST_F(SearchToolTest, GlobFilterAndPath) {
  EXPECT_EQ(Call("search", {{"pattern", "main"}, {"glob", "*.py"}}).content,
            "src/util.py:1: def main():\n");
  EXPECT_EQ(Call("search", {{"pattern", "return"}, {"path", "src"}}).content,
            "src/main.cc:3:   return 0;\n");
}

TEST_F(SearchToolTest, NamedFileIsSearchedEvenIfIgnored) {
  EXPECT_EQ(Call("search", {{"pattern", "main"}, {"path", "ignored/main.cc"}}).content,
            "ignored/main.cc:1: int main() {}\n");
}

TEST_F(SearchToolTest, SkipsBinaryGitAgentAndIgnored) {
  std::string out = Call("search", {{"pattern", "main"}}).content;
  EXPECT_THAT(out, Not(HasSubstr("bin.dat")));
  EXPECT_THAT(out, Not(HasSubstr(".git/")));
  EXPECT_THAT(out, Not(HasSubstr(".agent/")));
  EXPECT_THAT(out, Not(HasSubstr("ignored/")));
}

TEST_F(SearchToolTest, InvalidRegexIsAClearError) {
  ToolOutcome out = Call("search", {{"pattern", "foo(bar"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("invalid regex \"foo(bar\": missing )"));
}

TEST_F(SearchToolTest, NoMatches) {
  ToolOutcome out = Call("search", {{"pattern", "zzz_nothing"}});
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content, "No matches for zzz_nothing\n");
}

TEST_F(SearchToolTest, CapsMatchesAndSaysHowManyMore) {
  std::string text;
  for (int i = 0; i < 250; ++i) text += "hit " + std::to_string(i) + "\n";
  Write("many.txt", text);
  ToolOutcome out = Call("search", {{"pattern", "^hit"}, {"path", "many.txt"}});
  EXPECT_THAT(out.content, HasSubstr("many.txt:200: hit 199\n"));
  EXPECT_THAT(out.content, Not(HasSubstr("many.txt:201:")));
  EXPECT_THAT(out.content, HasSubstr("… 50 more matches not shown (250 in all"));
}

TEST_F(SearchToolTest, OutsidePathIsRefused) {
  ToolOutcome out = Call("search", {{"pattern", "x"}, {"path", "/etc"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("outside the project"));
}

}  // namespace
}  // namespace agent::daemon::tools
