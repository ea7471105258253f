#include "daemon/tools/change_preview.h"

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::Exists;
using ::agent::daemon::tools::testing::ReadFile;
using ::agent::daemon::tools::testing::StatusIs;
using ::agent::daemon::tools::testing::ToolTest;
using ::testing::HasSubstr;

using ChangePreviewTest = ToolTest;

TEST_F(ChangePreviewTest, EditPreviewIsTheDiffAndWritesNothing) {
  Write("a.cc", "one\ntwo\nthree\n");
  Call("read_file", {{"path", "a.cc"}});
  absl::StatusOr<ChangePreview> p = PreviewGatedCall(
      "edit_file", {{"path", "a.cc"}, {"old_string", "two"}, {"new_string", "2"}}, ctx_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->summary, "edit a.cc (+1 -1)");
  EXPECT_EQ(p->diff, "--- a/a.cc\n+++ b/a.cc\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n");
  EXPECT_EQ(ReadFile(Path("a.cc")), "one\ntwo\nthree\n");
}

TEST_F(ChangePreviewTest, EditThatWouldFailReturnsTheErrorWithoutAsking) {
  Write("a.cc", "x x\n");
  Call("read_file", {{"path", "a.cc"}});
  EXPECT_THAT(
      PreviewGatedCall("edit_file", {{"path", "a.cc"}, {"old_string", "nope"}, {"new_string", "y"}},
                       ctx_),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("not found")));
  EXPECT_THAT(PreviewGatedCall("edit_file",
                               {{"path", "a.cc"}, {"old_string", "x"}, {"new_string", "y"}}, ctx_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("occurs 2 times")));
  Write("unread.cc", "u\n");
  EXPECT_THAT(
      PreviewGatedCall("edit_file",
                       {{"path", "unread.cc"}, {"old_string", "u"}, {"new_string", "v"}}, ctx_),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("read unread.cc")));
  EXPECT_THAT(PreviewGatedCall("write_file", {{"path", "../x"}, {"content", ""}}, ctx_),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(ChangePreviewTest, WritePreviewForANewFile) {
  absl::StatusOr<ChangePreview> p =
      PreviewGatedCall("write_file", {{"path", "n/new.txt"}, {"content", "a\nb\n"}}, ctx_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->summary, "create n/new.txt (2 lines)");
  EXPECT_EQ(p->diff, "--- a/n/new.txt\n+++ b/n/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_FALSE(Exists(Path("n/new.txt")));
  EXPECT_FALSE(Exists(Path("n")));
}

TEST_F(ChangePreviewTest, WritePreviewForAnExistingFile) {
  Write("f.txt", "old\n");
  Call("read_file", {{"path", "f.txt"}});
  absl::StatusOr<ChangePreview> p =
      PreviewGatedCall("write_file", {{"path", "f.txt"}, {"content", "new\n"}}, ctx_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->summary, "overwrite f.txt (+1 -1)");
  EXPECT_THAT(p->diff, HasSubstr("-old\n+new\n"));
}

TEST_F(ChangePreviewTest, BashPreviewIsTheCommand) {
  absl::StatusOr<ChangePreview> p = PreviewGatedCall("bash", {{"command", "make test"}}, ctx_);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->summary, "make test");
  EXPECT_EQ(p->diff, "");
  EXPECT_THAT(PreviewGatedCall("bash", Json::object(), ctx_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"command\"")));
}

TEST_F(ChangePreviewTest, UngatedToolHasNoPreview) {
  EXPECT_THAT(PreviewGatedCall("read_file", {{"path", "a"}}, ctx_),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace agent::daemon::tools
