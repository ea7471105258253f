#include "daemon/tools/gitignore.h"
#include "daemon/tools/glob.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::testing::ElementsAre;

TEST(GlobTest, StarStaysWithinASegment) {
  EXPECT_TRUE(GlobMatch("*.cc", "a.cc"));
  EXPECT_FALSE(GlobMatch("*.cc", "src/a.cc"));
  EXPECT_TRUE(GlobMatch("src/*.cc", "src/a.cc"));
  EXPECT_FALSE(GlobMatch("src/*.cc", "src/x/a.cc"));
  EXPECT_TRUE(GlobMatch("*", ".hidden"));
  EXPECT_TRUE(GlobMatch("a*b*c", "axxbyyc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "axxbyy"));
}

TEST(GlobTest, DoubleStarSpansZeroOrMoreSegments) {
  EXPECT_TRUE(GlobMatch("**/b.cc", "b.cc"));
  EXPECT_TRUE(GlobMatch("**/b.cc", "a/x/b.cc"));
  EXPECT_TRUE(GlobMatch("src/**/*.h", "src/a.h"));
  EXPECT_TRUE(GlobMatch("src/**/*.h", "src/x/y/a.h"));
  EXPECT_FALSE(GlobMatch("src/**/*.h", "lib/a.h"));
  EXPECT_TRUE(GlobMatch("a/**", "a/b/c"));
  EXPECT_TRUE(GlobMatch("**", "anything/at/all"));
}

TEST(GlobTest, QuestionMarkClassesAndEscapes) {
  EXPECT_TRUE(GlobMatch("?.txt", "a.txt"));
  EXPECT_FALSE(GlobMatch("?.txt", "ab.txt"));
  EXPECT_TRUE(GlobMatch("[a-c]x", "bx"));
  EXPECT_FALSE(GlobMatch("[a-c]x", "dx"));
  EXPECT_TRUE(GlobMatch("[!a-c]x", "dx"));
  EXPECT_TRUE(GlobMatch("\\*x", "*x"));
  EXPECT_FALSE(GlobMatch("\\*x", "ax"));
  EXPECT_TRUE(GlobMatch("[x", "[x"));  // unclosed bracket is literal
}

TEST(GlobTest, BracesExpand) {
  EXPECT_THAT(ExpandBraces("*.{cc,h}"), ElementsAre("*.cc", "*.h"));
  EXPECT_THAT(ExpandBraces("{a,{b,c}}x"), ElementsAre("ax", "bx", "cx"));
  EXPECT_THAT(ExpandBraces("{a}"), ElementsAre("{a}"));
  EXPECT_THAT(ExpandBraces("{a,b"), ElementsAre("{a,b"));
  EXPECT_EQ(ExpandBraces("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", 10).size(), 10u);
}

TEST(GlobTest, PathGlobWithoutSlashMatchesNamesAtAnyDepth) {
  EXPECT_TRUE(PathGlob("*.cc").Matches("src/deep/a.cc"));
  EXPECT_FALSE(PathGlob("src/*.cc").Matches("other/src/a.cc"));
  EXPECT_TRUE(PathGlob("./src/*.cc").Matches("src/a.cc"));
  PathGlob mixed("{*.md,docs/*.txt}");
  EXPECT_TRUE(mixed.Matches("a/b/README.md"));
  EXPECT_TRUE(mixed.Matches("docs/x.txt"));
  EXPECT_FALSE(mixed.Matches("a/docs/x.txt"));
}

using Verdict = GitignoreRules::Verdict;

TEST(GitignoreTest, CommentsBlanksNegationAndDirOnly) {
  GitignoreRules r =
      GitignoreRules::Parse("# comment\n\n*.log\n!keep.log\nbuild/\n\\#literal\ntrailing   \n");
  EXPECT_EQ(r.Check("x.log", false), Verdict::kIgnored);
  EXPECT_EQ(r.Check("sub/x.log", false), Verdict::kIgnored);
  EXPECT_EQ(r.Check("keep.log", false), Verdict::kIncluded);
  EXPECT_EQ(r.Check("build", true), Verdict::kIgnored);
  EXPECT_EQ(r.Check("build", false), Verdict::kNoMatch);  // a file named build stays
  EXPECT_EQ(r.Check("#literal", false), Verdict::kIgnored);
  EXPECT_EQ(r.Check("trailing", false), Verdict::kIgnored);
  EXPECT_EQ(r.Check("# comment", false), Verdict::kNoMatch);
}

TEST(GitignoreTest, LeadingOrInnerSlashAnchors) {
  GitignoreRules r = GitignoreRules::Parse("/root.txt\ndoc/*.txt\n**/gen\n");
  EXPECT_EQ(r.Check("root.txt", false), Verdict::kIgnored);
  EXPECT_EQ(r.Check("sub/root.txt", false), Verdict::kNoMatch);
  EXPECT_EQ(r.Check("doc/a.txt", false), Verdict::kIgnored);
  EXPECT_EQ(r.Check("x/doc/a.txt", false), Verdict::kNoMatch);
  EXPECT_EQ(r.Check("a/b/gen", true), Verdict::kIgnored);
  EXPECT_EQ(r.Check("gen", true), Verdict::kIgnored);
}

TEST(GitignoreTest, DeeperFileTakesPrecedenceAndAppliesOnlyBelowItself) {
  IgnoreStack stack = IgnoreStack()
                          .With("", GitignoreRules::Parse("*.tmp\n"))
                          .With("sub", GitignoreRules::Parse("!special.tmp\nlocal.txt\n"));
  EXPECT_TRUE(stack.IsIgnored("a.tmp", false));
  EXPECT_TRUE(stack.IsIgnored("sub/a.tmp", false));
  EXPECT_FALSE(stack.IsIgnored("sub/special.tmp", false));
  EXPECT_TRUE(stack.IsIgnored("special.tmp", false));
  EXPECT_TRUE(stack.IsIgnored("sub/x/local.txt", false));
  EXPECT_FALSE(stack.IsIgnored("local.txt", false));
  EXPECT_FALSE(stack.IsIgnored("subway/local.txt", false));
}

}  // namespace
}  // namespace agent::daemon::tools
