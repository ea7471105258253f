#include "client/input/completion.h"

#include <sys/stat.h>

#include "client/input/completion_sources.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::client {
namespace {

CompletionSources Sources(std::vector<std::string> files = {},
                          std::vector<CommandCandidate> custom = {}) {
  CompletionSources s;
  s.project_files = [files] { return files; };
  s.custom_commands = [custom] { return custom; };
  return s;
}

TEST(CompletionTest, MentionsFromASubdirectoryOfferItsFilesFirstThenTheWholeProject) {
  std::vector<std::string> files = {"notes.txt", "src/a.c", "sub/deep/x.h", "sub/notes.txt"};
  EXPECT_EQ(FilesFromDirectory(files, "/p", "/p/sub"),
            (std::vector<std::string>{"deep/x.h", "notes.txt", "src/a.c"}));  // one notes.txt
  EXPECT_EQ(FilesFromDirectory(files, "/p", "/p"), files);
  EXPECT_EQ(FilesFromDirectory(files, "/p", ""), files);
  EXPECT_EQ(FilesFromDirectory(files, "/p", "/elsewhere/sub"), files);
  // "src/a.c" from sub/ is offered as the root has it, and completes so.
  Completion c = Complete("@a.c", Sources(FilesFromDirectory(files, "/p", "/p/sub")));
  EXPECT_EQ(c.insert, "@src/a.c ");
}

TEST(CompletionTest, ACommandNameCompletesWithASpace) {
  Completion c = Complete("/he", Sources());
  EXPECT_EQ(c.erase, 3u);
  EXPECT_EQ(c.insert, "/help ");
  EXPECT_EQ(Complete("/HE", Sources()).insert, "/help ");
}

TEST(CompletionTest, SeveralCommandsAreListedWhenNothingCanBeAdded) {
  Completion c = Complete("/s", Sources());
  EXPECT_TRUE(c.insert.empty());
  EXPECT_NE(std::find(c.choices.begin(), c.choices.end(), "/status"), c.choices.end());
  EXPECT_NE(std::find(c.choices.begin(), c.choices.end(), "/sessions"), c.choices.end());
  // Their common prefix is added first.
  EXPECT_EQ(Complete("/se", Sources()).insert, "/sessions ");
}

TEST(CompletionTest, CustomCommandsFromTheCallerCompleteButNeverShadowABuiltin) {
  auto src = Sources({}, {{"review-pr", "review a PR"}, {"help", "project help"}});
  EXPECT_EQ(Complete("/rev", src).insert, "/review-pr ");
  Completion c = Complete("/h", src);
  EXPECT_EQ(c.insert, "/help ");  // one "help", the built-in
  // Listed with what they do (front matter `description:`), on one line.
  src = Sources({}, {{"rev-a", "review\nthe \x1b[2J PR"}, {"rev-b", ""}});
  c = Complete("/rev-", src);
  EXPECT_EQ(c.choices, (std::vector<std::string>{"/rev-a (review the  [2J PR)", "/rev-b"}));
}

TEST(CompletionTest, NotACommandWordIsLeftAlone) {
  EXPECT_TRUE(Complete("/etc/hos", Sources()).insert.empty());
  EXPECT_TRUE(Complete("//he", Sources()).insert.empty());
  EXPECT_TRUE(Complete("plain words", Sources()).insert.empty());
}

TEST(CompletionTest, AtCompletesFuzzyOverProjectFiles) {
  auto src = Sources({"client/renderer.cc", "client/markdown.cc", "docs/notes.md"});
  Completion c = Complete("look at @rendcc", src);
  EXPECT_EQ(c.erase, 7u);
  EXPECT_EQ(c.insert, "@client/renderer.cc ");
  // A directory is a candidate too, and gets no space (the path goes on).
  EXPECT_EQ(Complete("@doc", Sources({"docs/notes.md", "docs/more.md"})).insert, "@docs/");
}

TEST(CompletionTest, AmbiguousFuzzyMatchesAreListedBestFirst) {
  auto src = Sources({"tests/client/markdown_test.cc", "client/markdown.cc", "client/markdown.h"});
  Completion c = Complete("@markdown", src);
  EXPECT_TRUE(c.insert.empty());
  ASSERT_GE(c.choices.size(), 3u);
  EXPECT_EQ(c.choices[0].rfind("@client/markdown.", 0), 0u);  // the name starts with it
  EXPECT_EQ(c.choices[2], "@tests/client/markdown_test.cc");
}

TEST(CompletionTest, FuzzyRanksNameStartsFirstAndSkipsNonMatches) {
  std::vector<std::string> paths = {"a/xx_render.cc", "render.cc", "b/r_e_n_d.cc", "zzz"};
  std::vector<std::string> m = FuzzyMatch("rend", paths, 10);
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[0], "render.cc");
  EXPECT_EQ(std::find(m.begin(), m.end(), "zzz"), m.end());
  EXPECT_EQ(FuzzyMatch("rend", paths, 1).size(), 1u);
}

TEST(CompletionTest, PathsCompleteInACommandsArguments) {
  agent::testing::TempDir dir;
  agent::testing::WriteFile(dir.Join("docs/guide.md"), "x");
  agent::testing::WriteFile(dir.Join("docs/.hidden"), "x");
  CompletionSources src = Sources();
  src.cwd = dir.path();
  EXPECT_EQ(Complete("/allow do", src).insert, "docs/");
  EXPECT_EQ(Complete("/allow docs/g", src).insert, "docs/guide.md ");
  EXPECT_EQ(Complete("/allow docs/", src).insert, "docs/guide.md ");  // dotfiles only when asked
  EXPECT_EQ(Complete("/allow docs/.h", src).insert, "docs/.hidden ");
  // Not in a prompt: a path there is just text.
  EXPECT_TRUE(Complete("see docs/g", src).insert.empty());
}

TEST(CompletionTest, NamesWithControlCharactersAreNeverOffered) {
  auto src =
      Sources({"evil\x1b]0;pwned\x07.txt", "evil/\x1b[2Jx", "good.txt"}, {{"bad\x1b[2J", ""}});
  EXPECT_EQ(Complete("@evi", src).insert, "");
  EXPECT_TRUE(Complete("@evi", src).choices.empty());
  EXPECT_EQ(Complete("@goo", src).insert, "@good.txt ");
  EXPECT_EQ(Complete("/bad", src).insert, "");
  agent::testing::TempDir dir;
  agent::testing::WriteFile(dir.Join("x\x1b[2Jy"), "x");
  src.cwd = dir.path();
  EXPECT_EQ(Complete("/allow x", src).insert, "");
}

// C1 controls (U+009B is CSI on some terminals) and bytes that are not UTF-8 count too; a
// description loses them.
TEST(CompletionTest, NamesWithC1ControlsAreNeverOffered) {
  auto src = Sources({"evil\xC2\x9B"
                      "2J.txt",
                      "evil\x9B"
                      "2J.md",
                      "good.txt"},
                     {{"bad\xC2\x9D"
                       "0;x",
                       ""},
                      {"rev",
                       "a\xC2\x9B"
                       "31mb"}});
  EXPECT_TRUE(Complete("@evi", src).choices.empty());
  EXPECT_EQ(Complete("@evi", src).insert, "");
  EXPECT_EQ(Complete("/bad", src).insert, "");
  EXPECT_EQ(Complete("/rev", src).insert, "/rev ");
  EXPECT_EQ(Complete("/re", src).choices, (std::vector<std::string>{"/rewind", "/rev (a31mb)"}));
}

}  // namespace
}  // namespace agent::client
