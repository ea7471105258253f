#include "daemon/prompt/mentions.h"

#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

class MentionsTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& rel, const std::string& content) {
    agent::testing::WriteFile(dir_.Join(rel), content);
    return dir_.Join(rel);
  }
  MentionExpansion Expand(const std::string& text, const policy::RuleSet& rules = {},
                          const MentionLimits& limits = {}) {
    return ExpandMentions(dir_.path(), text, rules, limits);
  }
  agent::testing::TempDir dir_;
};

TEST(FindMentionsTest, TakesWordsAfterAtOutsideCode) {
  EXPECT_THAT(FindMentions("look at @src/a.c and (@b.txt), mail me@x.org"),
              ElementsAre("src/a.c", "b.txt),"));
  EXPECT_THAT(FindMentions("@a\n```\n@inside\n```\n`@code` @b"), ElementsAre("a", "b"));
  EXPECT_THAT(FindMentions("@ alone, @@twice"), IsEmpty());
}

TEST_F(MentionsTest, ARelativeMentionResolvesFromTheSessionsDirectoryThenTheRoot) {
  Write("sub/notes.txt", "in sub\n");
  Write("notes.txt", "at the root\n");
  Write("src/a.c", "int a;\n");
  MentionExpansion m = ExpandMentions(dir_.path(), "@notes.txt and @src/a.c", policy::RuleSet{}, {},
                                      dir_.Join("sub"));
  EXPECT_THAT(m.warnings, IsEmpty());
  EXPECT_THAT(m.attachments, HasSubstr("<mention path=\"sub/notes.txt\""));
  EXPECT_THAT(m.attachments, HasSubstr("in sub"));
  EXPECT_THAT(m.attachments, Not(HasSubstr("at the root")));
  EXPECT_THAT(m.attachments, HasSubstr("<mention path=\"src/a.c\""));  // the whole project
  // From the root, the root's.
  m = Expand("@notes.txt");
  EXPECT_THAT(m.attachments, HasSubstr("at the root"));
}

TEST_F(MentionsTest, AttachesAFileAsReadFileShowsIt) {
  const std::string abs = Write("src/a.c", "int main() {}\nreturn 0;\n");
  MentionExpansion m = Expand("what does @src/a.c do?");
  EXPECT_THAT(m.warnings, IsEmpty());
  EXPECT_THAT(m.attachments, HasSubstr("<mention path=\"src/a.c\" tool=\"read_file\">\n"));
  EXPECT_THAT(m.attachments, HasSubstr("     1\tint main() {}\n     2\treturn 0;\n</mention>"));
  ASSERT_THAT(m.reads, SizeIs(1));
  EXPECT_EQ(m.reads[0].abs_path, abs);
  EXPECT_EQ(m.reads[0].content, "int main() {}\nreturn 0;\n");
}

// The file changes after the model was shown it: what is recorded as read must be what the
// model saw, so the change is not recorded at all (an edit then asks for a read).
TEST_F(MentionsTest, AFileChangedAfterItWasShownIsNotMarkedRead) {
  const std::string abs = Write("a.txt", "old\n");
  MentionLimits limits;
  limits.after_show = [&](const std::string& path) {
    EXPECT_EQ(path, abs);
    Write("a.txt", "new\n");
  };
  MentionExpansion m = Expand("@a.txt", {}, limits);
  EXPECT_THAT(m.attachments, HasSubstr("     1\told\n"));
  EXPECT_THAT(m.reads, IsEmpty());
  limits.after_show = [&](const std::string&) {};  // unchanged: recorded as shown
  m = Expand("@a.txt", {}, limits);
  ASSERT_THAT(m.reads, SizeIs(1));
  EXPECT_EQ(m.reads[0].content, "new\n");
}

TEST_F(MentionsTest, TrailingPunctuationIsDroppedAndRepeatsAttachOnce) {
  Write("notes.txt", "hi\n");
  MentionExpansion m = Expand("read @notes.txt, then @notes.txt.");
  EXPECT_THAT(m.warnings, IsEmpty());
  EXPECT_THAT(m.reads, SizeIs(1));
}

TEST_F(MentionsTest, ADirectoryGetsAListing) {
  Write("src/a.c", "x\n");
  Write("src/b.c", "y\n");
  MentionExpansion m = Expand("@src/");
  EXPECT_THAT(m.attachments, HasSubstr("tool=\"list_dir\">\na.c\nb.c\n</mention>"));
  EXPECT_THAT(m.reads, IsEmpty());
}

TEST_F(MentionsTest, UnknownPathsStayWithAWarning) {
  MentionExpansion m = Expand("ping @alice about it");
  EXPECT_EQ(m.attachments, "");
  EXPECT_THAT(m.warnings, ElementsAre("@alice: no such file or directory in the project"));
}

TEST_F(MentionsTest, NothingOutsideTheProject) {
  agent::testing::TempDir outside;
  agent::testing::WriteFile(outside.Join("secret"), "s3cret\n");
  Write("p/x", "x\n");
  ASSERT_EQ(::symlink(outside.path().c_str(), dir_.Join("link").c_str()), 0);
  MentionExpansion m = Expand("@../secret @p/../p/x @" + outside.Join("secret") + " @link/secret");
  EXPECT_EQ(m.attachments, "");
  EXPECT_THAT(m.reads, IsEmpty());
  ASSERT_THAT(m.warnings, SizeIs(4));
  EXPECT_THAT(m.warnings[0], HasSubstr("`..` is not allowed"));
  EXPECT_THAT(m.warnings[1], HasSubstr("`..` is not allowed"));
  EXPECT_THAT(m.warnings[2], HasSubstr("outside the project"));
  EXPECT_THAT(m.warnings[3], HasSubstr("outside the project"));
}

TEST_F(MentionsTest, NeverTheAgentsOwnFilesOrGit) {
  Write(".agent/sessions/abc.json", "[]\n");
  Write(".git/config", "[core]\n");
  ASSERT_EQ(::symlink(".agent/sessions", dir_.Join("hist").c_str()), 0);
  MentionExpansion m = Expand("@.agent/sessions/abc.json @.git/config @hist/abc.json @.agent/");
  EXPECT_EQ(m.attachments, "");
  ASSERT_THAT(m.warnings, SizeIs(4));
  for (const std::string& w : m.warnings) EXPECT_THAT(w, HasSubstr("are not attached"));
}

TEST_F(MentionsTest, DenyRulesForReadFileAreHonoured) {
  Write(".env", "KEY=1\n");
  Write("ok.txt", "fine\n");
  auto rule = policy::ParseRule("read_file(.env)");
  ASSERT_TRUE(rule.ok());
  MentionExpansion m = Expand("@.env @ok.txt", policy::RuleSet{{}, {*rule}});
  EXPECT_THAT(m.attachments, Not(HasSubstr("KEY=1")));
  EXPECT_THAT(m.attachments, HasSubstr("fine"));
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("denied by a permission rule")));
}

TEST_F(MentionsTest, BrokenRuleFilesAttachNothing) {
  Write("ok.txt", "fine\n");
  MentionExpansion m =
      ExpandMentions(dir_.path(), "@ok.txt", absl::InvalidArgumentError("settings.json:1:1: bad"));
  EXPECT_EQ(m.attachments, "");
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("permission rules do not parse")));
}

TEST_F(MentionsTest, BinaryFilesAreDescribedNotDumped) {
  Write("img.png", std::string("\x89PNG\0\0\x01rest", 11));
  MentionExpansion m = Expand("@img.png");
  EXPECT_THAT(m.attachments, HasSubstr("looks like a binary file (11 bytes); not shown"));
  EXPECT_THAT(m.attachments, Not(HasSubstr("PNG")));
  EXPECT_THAT(m.reads, IsEmpty());
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("described, not attached")));
}

TEST_F(MentionsTest, LongFilesAreCutWithANote) {
  std::string lines;
  for (int i = 1; i <= 2500; ++i) lines += "line " + std::to_string(i) + "\n";
  Write("big.txt", lines);
  MentionExpansion m = Expand("@big.txt");
  EXPECT_THAT(m.attachments, HasSubstr("showing lines 1-2000 of 2500; continue with offset=2001"));
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("attached in part")));
  EXPECT_THAT(m.reads, SizeIs(1));  // as read_file: the whole file was read
}

TEST_F(MentionsTest, TheTotalOfOnePromptIsCapped) {
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += std::string(60, 'a') + "\n";
  Write("a.txt", lines);
  Write("b.txt", lines);
  Write("c.txt", "small\n");
  MentionLimits limits;
  limits.max_total_bytes = 80 << 10;
  MentionExpansion m = Expand("@a.txt @b.txt @c.txt", {}, limits);
  EXPECT_LE(m.attachments.size(), limits.max_total_bytes);
  EXPECT_THAT(m.attachments, HasSubstr("[cut here: the attachments of one prompt are limited"));
  ASSERT_THAT(m.warnings, SizeIs(2));
  EXPECT_THAT(m.warnings[0], HasSubstr("@b.txt: attached in part"));
  EXPECT_THAT(m.warnings[1], HasSubstr("@c.txt: not attached"));
}

TEST_F(MentionsTest, FilesOverTheSizeCapAreDescribedNotRead) {
  Write("huge.log", std::string(100, 'x') + "\n");
  MentionLimits limits;
  limits.max_file_bytes = 50;
  MentionExpansion m = Expand("@huge.log", {}, limits);
  EXPECT_THAT(m.attachments, HasSubstr("huge.log has 101 bytes, more than the 0 KiB"));
  EXPECT_THAT(m.attachments, Not(HasSubstr("xxx")));
  EXPECT_THAT(m.reads, IsEmpty());
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("@huge.log: described, not attached")));
}

TEST_F(MentionsTest, TheNumberOfMentionsIsCapped) {
  Write("a", "1\n");
  Write("b", "2\n");
  MentionLimits limits;
  limits.max_mentions = 1;
  MentionExpansion m = Expand("@a @b", {}, limits);
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("@b: not attached: at most 1")));
}

}  // namespace
}  // namespace agent::daemon
