#include <unistd.h>

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::TempDir;
using ::agent::daemon::tools::testing::ToolTest;
using ::agent::daemon::tools::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using ReadFileToolTest = ToolTest;

TEST_F(ReadFileToolTest, ShowsNumberedLines) {
  Write("a.txt", "one\ntwo\n");
  ToolOutcome out = Call("read_file", {{"path", "a.txt"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "     1\tone\n     2\ttwo\n");
}

TEST_F(ReadFileToolTest, AnEditorsUnsavedTextIsShownAndSaidSo) {
  Write("a.txt", "on disk\n");
  Write("b.txt", "same\n");
  std::vector<std::string> asked;
  ctx_.editor_text = [&](const std::string& path) -> std::optional<std::string> {
    asked.push_back(path);
    if (path.ends_with("/a.txt")) return "typed\n";
    if (path.ends_with("/b.txt")) return "same\n";
    return std::nullopt;
  };
  EXPECT_EQ(Call("read_file", {{"path", "a.txt"}}).content,
            "(the editor's unsaved text of a.txt; the file on disk differs, and edits apply to "
            "the disk)\n     1\ttyped\n");
  EXPECT_EQ(Call("read_file", {{"path", "b.txt"}}).content, "     1\tsame\n");
  EXPECT_EQ(asked, (std::vector<std::string>{dir_.Join("a.txt"), dir_.Join("b.txt")}));
  // Edits check against the disk: what was recorded is the disk's content.
  EXPECT_FALSE(
      Call("edit_file", {{"path", "a.txt"}, {"old_string", "on disk"}, {"new_string", "edited"}})
          .is_error);
}

TEST_F(ReadFileToolTest, LastLineWithoutNewlineIsShown) {
  Write("a.txt", "one\ntwo");
  EXPECT_EQ(Call("read_file", {{"path", "a.txt"}}).content, "     1\tone\n     2\ttwo\n");
}

TEST_F(ReadFileToolTest, OffsetAndLimitSelectLinesAndSayHowToGoOn) {
  Write("a.txt", "1\n2\n3\n4\n5\n");
  ToolOutcome out = Call("read_file", {{"path", "a.txt"}, {"offset", 2}, {"limit", 2}});
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content,
            "     2\t2\n     3\t3\n(showing lines 2-3 of 5; continue with offset=4)\n");
  EXPECT_EQ(Call("read_file", {{"path", "a.txt"}, {"offset", 4}}).content,
            "     4\t4\n     5\t5\n");
}

TEST_F(ReadFileToolTest, DefaultLimitIs2000Lines) {
  std::string text;
  for (int i = 0; i < 2100; ++i) text += "x\n";
  Write("long.txt", text);
  ToolOutcome out = Call("read_file", {{"path", "long.txt"}});
  EXPECT_THAT(out.content, HasSubstr("  2000\tx\n(showing lines 1-2000 of 2100"));
  EXPECT_EQ(out.content.find("  2001\t"), std::string::npos);
}

TEST_F(ReadFileToolTest, OffsetPastTheEndIsAnError) {
  Write("a.txt", "1\n2\n");
  ToolOutcome out = Call("read_file", {{"path", "a.txt"}, {"offset", 9}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("past the end of a.txt (2 lines)"));
}

TEST_F(ReadFileToolTest, LongLinesAreCut) {
  Write("wide.txt", std::string(5000, 'w') + "\n");
  ToolOutcome out = Call("read_file", {{"path", "wide.txt"}});
  EXPECT_THAT(out.content, HasSubstr("… [line cut, 3000 more bytes]"));
  EXPECT_LT(out.content.size(), 2100u);
}

TEST_F(ReadFileToolTest, BinaryFileIsRefused) {
  Write("blob.bin", std::string("ELF\0\1\2", 6));
  ToolOutcome out = Call("read_file", {{"path", "blob.bin"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("binary"));
}

TEST_F(ReadFileToolTest, EmptyFileSaysSo) {
  Write("empty.txt", "");
  ToolOutcome out = Call("read_file", {{"path", "empty.txt"}});
  EXPECT_FALSE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("empty"));
}

TEST_F(ReadFileToolTest, DirectoryAndMissingFileAreErrors) {
  Write("d/f", "");
  ToolOutcome dir = Call("read_file", {{"path", "d"}});
  EXPECT_TRUE(dir.is_error);
  EXPECT_THAT(dir.content, HasSubstr("is a directory"));
  ToolOutcome missing = Call("read_file", {{"path", "nope.txt"}});
  EXPECT_TRUE(missing.is_error);
  EXPECT_THAT(missing.content, HasSubstr("nope.txt does not exist"));
}

TEST_F(ReadFileToolTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(Path("pipe").c_str(), 0600), 0);
  ToolOutcome out = Call("read_file", {{"path", "pipe"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("not a regular file"));
}

TEST_F(ReadFileToolTest, PathsOutsideTheProjectAreRefused) {
  TempDir outside;
  WriteFile(outside.Join("secret"), "s\n");
  ASSERT_EQ(::symlink(outside.Join("secret").c_str(), Path("link").c_str()), 0);
  for (const std::string& p : {std::string("../x"), outside.Join("secret"), std::string("link")}) {
    ToolOutcome out = Call("read_file", {{"path", p}});
    EXPECT_TRUE(out.is_error) << p;
    EXPECT_THAT(out.content, HasSubstr("outside the project")) << p;
  }
}

TEST_F(ReadFileToolTest, MissingPathArgumentIsNamed) {
  ToolOutcome out = Call("read_file", Json::object());
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "read_file: missing required argument \"path\"");
}

TEST_F(ReadFileToolTest, RecordsTheReadInTheTracker) {
  Write("a.txt", "1\n2\n3\n");
  EXPECT_FALSE(files_.HasSeen(Path("a.txt")));
  Call("read_file", {{"path", "a.txt"}, {"offset", 3}});
  EXPECT_TRUE(files_.HasSeen(Path("a.txt")));
  EXPECT_TRUE(files_.CheckUnchanged(Path("a.txt"), true).ok());
}

}  // namespace
}  // namespace agent::daemon::tools
