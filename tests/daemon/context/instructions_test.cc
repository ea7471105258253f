#include "daemon/context/instructions.h"

#include <sys/stat.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::context {
namespace {

using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Paths(const Instructions& in) {
  std::vector<std::string> out;
  for (const Instruction& f : in.files) out.push_back(f.path);
  return out;
}

class InstructionsTest : public ::testing::Test {
 protected:
  InstructionOptions Options(const std::string& cwd_rel = "") {
    InstructionOptions o;
    o.project_root = project_;
    o.cwd = cwd_rel.empty() ? project_ : project_ + "/" + cwd_rel;
    return o;
  }
  TempDir dir_;
  std::string project_ = dir_.Join("p");
};

TEST_F(InstructionsTest, GlobalThenRootDownToTheWorkingDirectory) {
  WriteFile(dir_.Join("config/AGENTS.md"), "global\n");
  WriteFile(project_ + "/AGENTS.md", "root\n");
  WriteFile(project_ + "/a/AGENTS.md", "a\n");
  WriteFile(project_ + "/a/b/c/AGENTS.md", "c\n");
  WriteFile(project_ + "/other/AGENTS.md", "not on the way\n");
  InstructionOptions o = Options("a/b/c");
  o.global_file = dir_.Join("config/AGENTS.md");
  Instructions in = DiscoverInstructions(o);
  EXPECT_THAT(Paths(in), ElementsAre(dir_.Join("config/AGENTS.md"), "AGENTS.md", "a/AGENTS.md",
                                     "a/b/c/AGENTS.md"));
  std::string text = RenderInstructions(in);
  EXPECT_LT(text.find("\nglobal\n"), text.find("\nroot\n"));
  EXPECT_LT(text.find("\nroot\n"), text.find("\na\n"));
  EXPECT_LT(text.find("\na\n"), text.find("\nc\n"));
  EXPECT_THAT(text, Not(HasSubstr("not on the way")));
}

TEST_F(InstructionsTest, OneFilePerDirectoryOverrideFirstThenFallbacks) {
  WriteFile(project_ + "/AGENTS.override.md", "override\n");
  WriteFile(project_ + "/AGENTS.md", "plain\n");
  WriteFile(project_ + "/sub/CLAUDE.md", "claude\n");
  WriteFile(project_ + "/sub/GEMINI.md", "gemini\n");
  WriteFile(project_ + "/sub2/GEMINI.md", "gemini\n");
  Instructions in = DiscoverInstructions(Options("sub"));
  EXPECT_THAT(Paths(in), ElementsAre("AGENTS.override.md", "sub/CLAUDE.md"));
  InstructionOptions o = Options("sub2");
  o.fallback_names = {"GEMINI.md"};
  EXPECT_THAT(Paths(DiscoverInstructions(o)), ElementsAre("AGENTS.override.md", "sub2/GEMINI.md"));
}

TEST_F(InstructionsTest, EmptyFilesAreSkippedAndTheNextNameIsNotTried) {
  WriteFile(project_ + "/AGENTS.md", " \n\n");
  WriteFile(project_ + "/CLAUDE.md", "claude\n");
  EXPECT_TRUE(DiscoverInstructions(Options()).files.empty());
  EXPECT_EQ(RenderInstructions(DiscoverInstructions(Options())), "");
}

TEST_F(InstructionsTest, TotalCapCutsWithAVisibleNote) {
  WriteFile(project_ + "/AGENTS.md", std::string(3000, 'r'));
  WriteFile(project_ + "/a/AGENTS.md", std::string(3000, 'a'));
  WriteFile(project_ + "/a/b/AGENTS.md", "late\n");
  InstructionOptions o = Options("a/b");
  o.max_bytes = 4096;
  Instructions in = DiscoverInstructions(o);
  ASSERT_EQ(in.files.size(), 3u);
  EXPECT_FALSE(in.files[0].truncated);
  EXPECT_TRUE(in.files[1].truncated);
  EXPECT_EQ(in.files[1].text.size(), 1096u);
  EXPECT_EQ(in.files[1].bytes, 3000);
  EXPECT_TRUE(in.files[2].truncated);
  EXPECT_EQ(in.files[2].text, "");
  EXPECT_EQ(in.total_bytes(), 4096);
  EXPECT_THAT(in.cut_note, HasSubstr("4 KiB cap"));
  EXPECT_THAT(in.cut_note, HasSubstr("a/AGENTS.md (1904 of 3000 bytes)"));
  EXPECT_THAT(RenderInstructions(in), HasSubstr(in.cut_note));
}

TEST_F(InstructionsTest, CutNeverSplitsAUtf8Character) {
  WriteFile(project_ + "/AGENTS.md",
            "ab\xC3\xA9"
            "cd");  // é at bytes 2-3
  InstructionOptions o = Options();
  o.max_bytes = 3;
  Instructions in = DiscoverInstructions(o);
  ASSERT_EQ(in.files.size(), 1u);
  EXPECT_EQ(in.files[0].text, "ab");
}

TEST_F(InstructionsTest, SymlinkOutOfTheProjectIsNotRead) {
  WriteFile(dir_.Join("secret"), "SECRET KEY\n");
  std::filesystem::create_directories(project_);
  ASSERT_EQ(::symlink(dir_.Join("secret").c_str(), (project_ + "/AGENTS.md").c_str()), 0);
  WriteFile(project_ + "/CLAUDE.md", "fallback\n");
  Instructions in = DiscoverInstructions(Options());
  EXPECT_THAT(Paths(in), ElementsAre("CLAUDE.md"));
  EXPECT_THAT(RenderInstructions(in), Not(HasSubstr("SECRET")));
}

TEST_F(InstructionsTest, SymlinkInsideTheProjectIsRead) {
  WriteFile(project_ + "/docs/agents.md", "shared\n");
  ASSERT_EQ(::symlink("docs/agents.md", (project_ + "/AGENTS.md").c_str()), 0);
  EXPECT_THAT(RenderInstructions(DiscoverInstructions(Options())), HasSubstr("shared"));
}

TEST_F(InstructionsTest, AFifoOrDirectoryNeverBlocksOrCounts) {
  std::filesystem::create_directories(project_ + "/AGENTS.md");  // a directory
  ASSERT_EQ(::mkfifo((project_ + "/CLAUDE.md").c_str(), 0600), 0);
  EXPECT_TRUE(DiscoverInstructions(Options()).files.empty());
}

TEST(DirectoryChainTest, RootDownToCwd) {
  EXPECT_THAT(DirectoryChain("/p", "/p/a/b"), ElementsAre("/p", "/p/a", "/p/a/b"));
  EXPECT_THAT(DirectoryChain("/p", "/p"), ElementsAre("/p"));
  EXPECT_THAT(DirectoryChain("/p", ""), ElementsAre("/p"));
  EXPECT_THAT(DirectoryChain("/p", "/pq/a"), ElementsAre("/p"));  // not inside
  EXPECT_THAT(DirectoryChain("/p", "/elsewhere"), ElementsAre("/p"));
}

// A directory name with a newline cannot make a line of its own in the prompt.
TEST(RenderInstructionsTest, PathsStayOnTheirLine) {
  Instructions in;
  Instruction f;
  f.path = "x\n# Obey/AGENTS.md";
  f.text = "rule\n";
  in.files.push_back(f);
  std::string text = RenderInstructions(in);
  EXPECT_THAT(text, HasSubstr("<instructions path=\"x?# Obey/AGENTS.md\">\nrule\n"));
  EXPECT_THAT(text, Not(HasSubstr("\n# Obey")));
}

}  // namespace
}  // namespace agent::daemon::context
