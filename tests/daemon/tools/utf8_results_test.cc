// Tools that put file bytes or file names into a result, or into an approval's diff, hand out
// valid UTF-8 whatever the files hold (proto3 strings must be valid UTF-8).
#include "common/utf8.h"
#include "daemon/tools/change_preview.h"
#include "daemon/tools/tool_helpers.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::ToolTest;
using ::testing::HasSubstr;

using Utf8ResultsTest = ToolTest;

const std::string kFffd(kReplacementChar);
// "café" in Latin-1, and a lone byte that starts no character.
const std::string kLatin1 = "caf\xE9 \xFF";

TEST_F(Utf8ResultsTest, ReadFileShowsInvalidBytesAsReplacementCharacters) {
  Write("latin1.txt", kLatin1 + "\n");
  ToolOutcome out = Call("read_file", {{"path", "latin1.txt"}});
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "     1\tcaf" + kFffd + " " + kFffd + "\n");
}

TEST_F(Utf8ResultsTest, SearchShowsMatchingLinesAsValidUtf8) {
  Write("latin1.txt", kLatin1 + "\n");
  ToolOutcome out = Call("search", {{"pattern", "caf"}});
  EXPECT_TRUE(IsValidUtf8(out.content)) << out.content;
  EXPECT_THAT(out.content, HasSubstr("latin1.txt:1: caf" + kFffd));
}

TEST_F(Utf8ResultsTest, FileNamesThatAreNotUtf8AreListedValid) {
  Write("name-\xFF.txt", "x\n");
  ToolOutcome list = Call("list_dir", {{"path", "."}});
  EXPECT_EQ(list.content, "name-" + kFffd + ".txt\n");
  ToolOutcome found = Call("find_files", {{"pattern", "*.txt"}});
  EXPECT_EQ(found.content, "name-" + kFffd + ".txt\n");
  ToolOutcome searched = Call("search", {{"pattern", "x"}});
  EXPECT_EQ(searched.content, "name-" + kFffd + ".txt:1: x\n");
}

TEST_F(Utf8ResultsTest, AnApprovalDiffOfALatin1FileIsValid) {
  Write("latin1.txt", kLatin1 + "\nold\n");
  ASSERT_FALSE(Call("read_file", {{"path", "latin1.txt"}}).is_error);
  absl::StatusOr<ChangePreview> p =
      PreviewGatedCall("write_file", {{"path", "latin1.txt"}, {"content", "new\n"}}, ctx_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(IsValidUtf8(p->diff));
  EXPECT_THAT(p->diff, HasSubstr("-caf" + kFffd));
}

TEST_F(Utf8ResultsTest, ErrorsNamingAFileWhoseNameIsNotUtf8AreValid) {
  ToolOutcome out = ErrorOutcome(absl::NotFoundError("no such file: a\xFF"));
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "no such file: a" + kFffd);
}

}  // namespace
}  // namespace agent::daemon::tools
