// Bash command patterns and path globs, matched one subject at a time.
#include <string>
#include <vector>

#include "daemon/policy/command_pattern.h"
#include "daemon/policy/path_glob.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;

bool CommandMatches(std::string_view pattern, std::string_view command) {
  return MatchCommandPattern(CompileCommandPattern(pattern), command);
}

TEST(CommandPattern, ExactPatternMatchesAfterWhitespaceNormalisation) {
  EXPECT_TRUE(CommandMatches("git status", "git status"));
  EXPECT_TRUE(CommandMatches("  git   status ", "git status"));
  EXPECT_FALSE(CommandMatches("git status", "git status -s"));
  EXPECT_FALSE(CommandMatches("git status", "git"));
}

TEST(CommandPattern, TrailingSpaceStarIsAWordPrefix) {
  EXPECT_TRUE(CommandMatches("git diff *", "git diff"));
  EXPECT_TRUE(CommandMatches("git diff *", "git diff HEAD~1 -- a.cc"));
  EXPECT_FALSE(CommandMatches("git diff *", "git diff-tree HEAD"));
  EXPECT_FALSE(CommandMatches("git diff *", "git dif"));
  EXPECT_FALSE(CommandMatches("npm run test *", "npm run test-all"));
  EXPECT_TRUE(CommandMatches("npm run test *", "npm run test -- --watch"));
}

TEST(CommandPattern, ColonStarIsTheSamePrefixAsClaudeCodeWritesIt) {
  EXPECT_TRUE(CommandMatches("npm run test:*", "npm run test"));
  EXPECT_TRUE(CommandMatches("npm run test:*", "npm run test --ci"));
  EXPECT_FALSE(CommandMatches("npm run test:*", "npm run test-all"));
  EXPECT_FALSE(CommandMatches("npm run test:*", "npm run test:e2e"));
}

TEST(CommandPattern, StarElsewhereMatchesAnyRun) {
  EXPECT_TRUE(CommandMatches("git diff*", "git diff-tree"));
  EXPECT_TRUE(CommandMatches("docker * --help", "docker run --rm x --help"));
  EXPECT_FALSE(CommandMatches("docker * --help", "docker run --help x"));
  EXPECT_TRUE(CommandMatches("*", "anything at all"));
  EXPECT_TRUE(CommandMatches("a*b*c", "abc"));
  EXPECT_FALSE(CommandMatches("a*b*c", "acb"));
}

TEST(CommandPattern, PrefixCombinesWithInnerStars) {
  EXPECT_TRUE(CommandMatches("git * --stat *", "git log --stat"));
  EXPECT_TRUE(CommandMatches("git * --stat *", "git log --stat -3"));
  EXPECT_FALSE(CommandMatches("git * --stat *", "git log --statistics"));
}

TEST(CommandPattern, BracketStarIsALiteralStar) {
  const CommandPattern p = CompileCommandPattern("rm -rf [*]");
  EXPECT_TRUE(p.exact());
  EXPECT_TRUE(MatchCommandPattern(p, "rm -rf *"));
  EXPECT_FALSE(MatchCommandPattern(p, "rm -rf /"));
  EXPECT_FALSE(MatchCommandPattern(p, "rm -rf"));
}

TEST(CommandPattern, EscapedCommandMatchesOnlyItself) {
  for (std::string command : {"rm -rf *", "ls [*] *.cc", "find . -name \\*.cc", "echo a *"}) {
    const CommandPattern p = CompileCommandPattern(EscapeCommandPattern(command));
    EXPECT_TRUE(p.exact()) << command;
    EXPECT_TRUE(MatchCommandPattern(p, command)) << command;
    EXPECT_FALSE(MatchCommandPattern(p, command + " x")) << command;
  }
  EXPECT_FALSE(CommandMatches(EscapeCommandPattern("rm -rf *"), "rm -rf /home"));
}

TEST(CommandPattern, PathologicalStarsStayFast) {
  const std::string command(20000, 'a');
  std::string pattern;
  for (int i = 0; i < 200; ++i) pattern += "*a";
  pattern += "*b";
  EXPECT_FALSE(CommandMatches(pattern, command));
}

TEST(NormalizePath, DropsDotsAndRedundantSeparators) {
  EXPECT_EQ(NormalizePath("./src//a.cc").Joined(), "src/a.cc");
  EXPECT_EQ(NormalizePath("src/./a/").Joined(), "src/a");
  EXPECT_FALSE(NormalizePath("src/a.cc").has_dotdot);
  EXPECT_TRUE(NormalizePath("src/../a").has_dotdot);
  EXPECT_TRUE(NormalizePath("/etc/passwd").absolute);
  EXPECT_EQ(NormalizePath("/etc//passwd").Joined(), "/etc/passwd");
}

TEST(ResolveDotDot, NeverClimbsAboveTheStart) {
  EXPECT_THAT(ResolveDotDot(NormalizePath("src/../.env").segments), ElementsAre(".env"));
  EXPECT_THAT(ResolveDotDot(NormalizePath("../../x/y").segments), ElementsAre("x", "y"));
}

bool PathMatches(std::string_view pattern, std::string_view path) {
  return MatchPathGlob(pattern, NormalizePath(path).segments);
}

TEST(PathGlob, DoubleStarMatchesEverythingUnderADirectory) {
  EXPECT_TRUE(PathMatches("src/**", "src/a.cc"));
  EXPECT_TRUE(PathMatches("src/**", "src/deep/er/a.cc"));
  EXPECT_TRUE(PathMatches("src/**", "src/.hidden"));
  EXPECT_FALSE(PathMatches("src/**", "src"));
  EXPECT_FALSE(PathMatches("src/**", "srcx/a.cc"));
  EXPECT_FALSE(PathMatches("src/**", "lib/src/a.cc"));
}

TEST(PathGlob, SingleStarStaysWithinOneSegment) {
  EXPECT_TRUE(PathMatches("*.md", "README.md"));
  EXPECT_FALSE(PathMatches("*.md", "docs/README.md"));
  EXPECT_TRUE(PathMatches("docs/*.md", "docs/a.md"));
  EXPECT_FALSE(PathMatches("docs/*.md", "docs/x/a.md"));
  EXPECT_TRUE(PathMatches("src/*/BUILD", "src/a/BUILD"));
  EXPECT_TRUE(PathMatches("src/**.cc", "src/a.cc"));
  EXPECT_FALSE(PathMatches("src/**.cc", "src/x/a.cc"));
}

TEST(PathGlob, LeadingAndMiddleDoubleStarMayMatchNoSegment) {
  EXPECT_TRUE(PathMatches("**/*.md", "README.md"));
  EXPECT_TRUE(PathMatches("**/*.md", "a/b/c/README.md"));
  EXPECT_FALSE(PathMatches("**/*.md", "a/README.md.txt"));
  EXPECT_TRUE(PathMatches("a/**/b", "a/b"));
  EXPECT_TRUE(PathMatches("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(PathMatches("a/**/b", "a/x/y/c"));
}

TEST(PathGlob, QuestionMarkAndEscapes) {
  EXPECT_TRUE(PathMatches("file?.txt", "file1.txt"));
  EXPECT_FALSE(PathMatches("file?.txt", "file12.txt"));
  EXPECT_TRUE(PathMatches(EscapePathGlob("weird*name?.txt"), "weird*name?.txt"));
  EXPECT_FALSE(PathMatches(EscapePathGlob("weird*name?.txt"), "weirdXnameY.txt"));
}

TEST(PathGlob, PatternIsNormalisedAndDotDotPatternsMatchNothing) {
  EXPECT_TRUE(PathMatches("./src//*.cc", "src/a.cc"));
  EXPECT_FALSE(PathMatches("../x", "x"));
  EXPECT_FALSE(PathMatches("", "x"));
}

TEST(PathGlob, ManyDoubleStarsOnALongPathStayFast) {
  std::string pattern;
  for (int i = 0; i < 100; ++i) pattern += "**/";
  pattern += "z";
  std::string path;
  for (int i = 0; i < 5000; ++i) path += "a/";
  path += "y";
  EXPECT_FALSE(PathMatches(pattern, path));
}

}  // namespace
}  // namespace agent::daemon::policy
