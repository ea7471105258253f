#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::Exists;
using ::agent::daemon::tools::testing::ReadFile;
using ::agent::daemon::tools::testing::TempDir;
using ::agent::daemon::tools::testing::ToolTest;
using ::agent::daemon::tools::testing::WriteFile;
using ::testing::HasSubstr;

using WriteFileToolTest = ToolTest;
using EditFileToolTest = ToolTest;

TEST_F(WriteFileToolTest, CreatesFileAndParentDirectories) {
  ToolOutcome out = Call("write_file", {{"path", "new/dir/f.txt"}, {"content", "a\nb\n"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "Created new/dir/f.txt (2 lines, 4 bytes)");
  EXPECT_EQ(ReadFile(Path("new/dir/f.txt")), "a\nb\n");
  EXPECT_TRUE(files_.HasSeen(Path("new/dir/f.txt")));
}

TEST_F(WriteFileToolTest, RefusesToOverwriteAnUnreadFile) {
  Write("f.txt", "precious\n");
  ToolOutcome out = Call("write_file", {{"path", "f.txt"}, {"content", "x"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "read f.txt before editing it");
  EXPECT_EQ(ReadFile(Path("f.txt")), "precious\n");
}

TEST_F(WriteFileToolTest, OverwritesAfterARead) {
  Write("f.txt", "old\n");
  Call("read_file", {{"path", "f.txt"}});
  ToolOutcome out = Call("write_file", {{"path", "f.txt"}, {"content", "new\n"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "Wrote f.txt (1 lines, 4 bytes)");
  EXPECT_EQ(ReadFile(Path("f.txt")), "new\n");
}

TEST_F(WriteFileToolTest, RefusesAFileChangedSinceItWasRead) {
  Write("f.txt", "old\n");
  Call("read_file", {{"path", "f.txt"}});
  Write("f.txt", "user edit\n");
  ToolOutcome out = Call("write_file", {{"path", "f.txt"}, {"content", "agent\n"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "f.txt changed since you read it; read it again");
  EXPECT_EQ(ReadFile(Path("f.txt")), "user edit\n");
}

TEST_F(WriteFileToolTest, KeepsTheFileMode) {
  Write("run.sh", "echo 1\n");
  ASSERT_EQ(::chmod(Path("run.sh").c_str(), 0750), 0);
  Call("read_file", {{"path", "run.sh"}});
  ASSERT_FALSE(Call("write_file", {{"path", "run.sh"}, {"content", "echo 2\n"}}).is_error);
  struct stat st;
  ASSERT_EQ(::stat(Path("run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

TEST_F(WriteFileToolTest, ReadOnlyFileIsNotReplaced) {
  Write("ro.txt", "keep\n");
  ASSERT_EQ(::chmod(Path("ro.txt").c_str(), 0444), 0);
  Call("read_file", {{"path", "ro.txt"}});
  ToolOutcome out = Call("write_file", {{"path", "ro.txt"}, {"content", "x"}});
  if (::geteuid() == 0) GTEST_SKIP() << "root may write anything";
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("read-only"));
  EXPECT_EQ(ReadFile(Path("ro.txt")), "keep\n");
}

TEST_F(WriteFileToolTest, WritesThroughAnInsideSymlinkToItsTarget) {
  Write("real.txt", "r\n");
  ASSERT_EQ(::symlink("real.txt", Path("alias.txt").c_str()), 0);
  Call("read_file", {{"path", "alias.txt"}});
  ASSERT_FALSE(Call("write_file", {{"path", "alias.txt"}, {"content", "w\n"}}).is_error);
  EXPECT_EQ(ReadFile(Path("real.txt")), "w\n");
  struct stat st;
  ASSERT_EQ(::lstat(Path("alias.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(WriteFileToolTest, RefusesPathsOutsideAndDirectories) {
  TempDir outside;
  ASSERT_EQ(::symlink(outside.path().c_str(), Path("out").c_str()), 0);
  for (const std::string& p :
       {std::string("../escape.txt"), outside.Join("abs.txt"), std::string("out/new.txt")}) {
    ToolOutcome out = Call("write_file", {{"path", p}, {"content", "x"}});
    EXPECT_TRUE(out.is_error) << p;
    EXPECT_THAT(out.content, HasSubstr("outside the project")) << p;
  }
  EXPECT_FALSE(Exists(outside.Join("abs.txt")));
  EXPECT_FALSE(Exists(outside.Join("new.txt")));
  Write("d/f", "");
  EXPECT_THAT(Call("write_file", {{"path", "d"}, {"content", "x"}}).content,
              HasSubstr("is a directory"));
}

TEST_F(WriteFileToolTest, FileInPlaceOfAParentDirectoryIsAnError) {
  Write("a.txt", "");
  ToolOutcome out = Call("write_file", {{"path", "a.txt/b.txt"}, {"content", "x"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("not a directory"));
}

TEST_F(WriteFileToolTest, MissingContentIsNamed) {
  ToolOutcome out = Call("write_file", {{"path", "f.txt"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "write_file: missing required argument \"content\"");
}

TEST_F(EditFileToolTest, ReplacesAUniqueString) {
  Write("a.cc", "int x = 1;\nint y = 2;\n");
  Call("read_file", {{"path", "a.cc"}});
  ToolOutcome out =
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "y = 2"}, {"new_string", "y = 3"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "Edited a.cc (1 replacement)");
  EXPECT_EQ(ReadFile(Path("a.cc")), "int x = 1;\nint y = 3;\n");
  // The agent's own edit counts as known: a second edit needs no new read.
  EXPECT_FALSE(
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "x = 1"}, {"new_string", "x = 0"}})
          .is_error);
}

TEST_F(EditFileToolTest, ZeroMatchesIsAnError) {
  Write("a.cc", "abc\n");
  Call("read_file", {{"path", "a.cc"}});
  ToolOutcome out =
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "xyz"}, {"new_string", "q"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("old_string was not found in a.cc"));
}

TEST_F(EditFileToolTest, CrlfMismatchGetsAHint) {
  Write("w.txt", "a\r\nb\r\n");
  Call("read_file", {{"path", "w.txt"}});
  ToolOutcome out =
      Call("edit_file", {{"path", "w.txt"}, {"old_string", "a\nb"}, {"new_string", "c"}});
  EXPECT_THAT(out.content, HasSubstr("CRLF"));
}

TEST_F(EditFileToolTest, SeveralMatchesNameTheCountUnlessReplaceAll) {
  Write("a.cc", "foo foo\nfoo\n");
  Call("read_file", {{"path", "a.cc"}});
  ToolOutcome out =
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "foo"}, {"new_string", "bar"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("old_string occurs 3 times in a.cc"));
  EXPECT_EQ(ReadFile(Path("a.cc")), "foo foo\nfoo\n");
  out =
      Call("edit_file",
           {{"path", "a.cc"}, {"old_string", "foo"}, {"new_string", "bar"}, {"replace_all", true}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "Edited a.cc (3 replacements)");
  EXPECT_EQ(ReadFile(Path("a.cc")), "bar bar\nbar\n");
}

TEST_F(EditFileToolTest, UnreadFileIsRefused) {
  Write("a.cc", "abc\n");
  ToolOutcome out =
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "abc"}, {"new_string", "d"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "read a.cc before editing it");
}

TEST_F(EditFileToolTest, FileChangedSinceReadIsRefused) {
  Write("a.cc", "abc\n");
  Call("read_file", {{"path", "a.cc"}});
  Write("a.cc", "abc\nmore\n");
  ToolOutcome out =
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "abc"}, {"new_string", "d"}});
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "a.cc changed since you read it; read it again");
  EXPECT_EQ(ReadFile(Path("a.cc")), "abc\nmore\n");
}

TEST_F(EditFileToolTest, SameOrEmptyOldStringAndMissingFileAreErrors) {
  Write("a.cc", "abc\n");
  Call("read_file", {{"path", "a.cc"}});
  EXPECT_THAT(
      Call("edit_file", {{"path", "a.cc"}, {"old_string", "abc"}, {"new_string", "abc"}}).content,
      HasSubstr("are the same"));
  EXPECT_THAT(
      Call("edit_file", {{"path", "a.cc"}, {"old_string", ""}, {"new_string", "x"}}).content,
      HasSubstr("old_string is empty"));
  EXPECT_THAT(
      Call("edit_file", {{"path", "no.cc"}, {"old_string", "a"}, {"new_string", "b"}}).content,
      HasSubstr("no.cc does not exist"));
  EXPECT_THAT(Call("edit_file", {{"path", "a.cc"}, {"old_string", "a"}}).content,
              HasSubstr("missing required argument \"new_string\""));
}

}  // namespace
}  // namespace agent::daemon::tools
