#include "daemon/tools/path_resolver.h"

#include <unistd.h>

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::StatusIs;
using ::agent::daemon::tools::testing::TempDir;
using ::agent::daemon::tools::testing::WriteFile;
using ::testing::HasSubstr;

class PathResolverTest : public ::testing::Test {
 protected:
  PathResolverTest() {
    WriteFile(work_.Join("src/a.cc"), "x");
    WriteFile(outside_.Join("secret.txt"), "s");
  }
  TempDir work_;
  TempDir outside_;
};

TEST_F(PathResolverTest, RelativePathIsTakenFromTheWorkdir) {
  EXPECT_EQ(*ResolveInside(work_.path(), "src/a.cc"), work_.Join("src/a.cc"));
  EXPECT_EQ(*ResolveInside(work_.path(), "./src//./a.cc"), work_.Join("src/a.cc"));
  EXPECT_EQ(*ResolveInside(work_.path(), ""), work_.path());
  EXPECT_EQ(*ResolveInside(work_.path(), "."), work_.path());
}

TEST_F(PathResolverTest, NotYetExistingPathsResolveLexicallyBelowTheDeepestAncestor) {
  EXPECT_EQ(*ResolveInside(work_.path(), "src/new/dir/f.txt"), work_.Join("src/new/dir/f.txt"));
  EXPECT_EQ(*ResolveInside(work_.path(), "src/new/../b.cc"), work_.Join("src/b.cc"));
}

TEST_F(PathResolverTest, DotDotThatStaysInsideIsAccepted) {
  EXPECT_EQ(*ResolveInside(work_.path(), "src/../src/a.cc"), work_.Join("src/a.cc"));
}

TEST_F(PathResolverTest, DotDotEscapeIsRefusedWithAClearMessage) {
  absl::StatusOr<std::string> r = ResolveInside(work_.path(), "../x");
  EXPECT_THAT(r,
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("path \"../x\" is outside the project (" + work_.path() + ")")));
  EXPECT_THAT(ResolveInside(work_.path(), "src/../../x"),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(ResolveInside(work_.path(), "missing/../../x"),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, AbsolutePathInsideIsAcceptedAndElsewhereRefused) {
  EXPECT_EQ(*ResolveInside(work_.path(), work_.Join("src/a.cc")), work_.Join("src/a.cc"));
  EXPECT_THAT(ResolveInside(work_.path(), "/etc/passwd"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("outside the project")));
  EXPECT_THAT(ResolveInside(work_.path(), outside_.Join("secret.txt")),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, SiblingWithTheWorkdirAsPrefixIsOutside) {
  // /tmp/x-abc must not count as inside /tmp/x.
  std::string sibling = work_.path() + "-sibling";
  EXPECT_THAT(ResolveInside(work_.path(), sibling + "/f"),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, SymlinkedFileLeadingOutIsRefused) {
  ASSERT_EQ(::symlink(outside_.Join("secret.txt").c_str(), work_.Join("link.txt").c_str()), 0);
  EXPECT_THAT(ResolveInside(work_.path(), "link.txt"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("symlink")));
}

TEST_F(PathResolverTest, SymlinkedDirectoryLeadingOutIsRefused) {
  ASSERT_EQ(::symlink(outside_.path().c_str(), work_.Join("out").c_str()), 0);
  EXPECT_THAT(ResolveInside(work_.path(), "out/secret.txt"),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(ResolveInside(work_.path(), "out"), StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, NewFileUnderASymlinkedDirectoryLeadingOutIsRefused) {
  ASSERT_EQ(::symlink(outside_.path().c_str(), work_.Join("out").c_str()), 0);
  EXPECT_THAT(ResolveInside(work_.path(), "out/not/yet/there.txt"),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, DanglingSymlinkLeadingOutIsRefused) {
  ASSERT_EQ(::symlink(outside_.Join("nothing-here").c_str(), work_.Join("dangling").c_str()), 0);
  EXPECT_THAT(ResolveInside(work_.path(), "dangling"),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, SymlinkWithinTheProjectResolvesToItsTarget) {
  ASSERT_EQ(::symlink("src/a.cc", work_.Join("alias.cc").c_str()), 0);
  EXPECT_EQ(*ResolveInside(work_.path(), "alias.cc"), work_.Join("src/a.cc"));
}

TEST_F(PathResolverTest, DotDotAfterASymlinkIsTakenFromTheTarget) {
  // As the kernel does: deep/.. is the target's parent, not the link's directory.
  WriteFile(work_.Join("a/b/c.txt"), "c");
  ASSERT_EQ(::symlink("a/b", work_.Join("deep").c_str()), 0);
  EXPECT_EQ(*ResolveInside(work_.path(), "deep/../x"), work_.Join("a/x"));
}

TEST_F(PathResolverTest, RelativeSymlinkClimbingOutIsRefused) {
  ASSERT_EQ(::symlink("../../../../../../../../etc", work_.Join("src/etc").c_str()), 0);
  EXPECT_THAT(ResolveInside(work_.path(), "src/etc/passwd"),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(PathResolverTest, SymlinkLoopIsAnError) {
  ASSERT_EQ(::symlink("loop2", work_.Join("loop1").c_str()), 0);
  ASSERT_EQ(::symlink("loop1", work_.Join("loop2").c_str()), 0);
  EXPECT_THAT(ResolveInside(work_.path(), "loop1/x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("symbolic links")));
}

TEST_F(PathResolverTest, NulByteIsRefused) {
  EXPECT_THAT(ResolveInside(work_.path(), std::string_view("a\0b", 3)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(PathResolverTest, RelativeToWorkdirForDisplay) {
  EXPECT_EQ(RelativeToWorkdir(work_.path(), work_.Join("src/a.cc")), "src/a.cc");
  EXPECT_EQ(RelativeToWorkdir(work_.path(), work_.path()), ".");
  EXPECT_EQ(RelativeToWorkdir(work_.path() + "/", work_.Join("x")), "x");
  EXPECT_EQ(RelativeToWorkdir(work_.path(), "/etc/passwd"), "/etc/passwd");
  EXPECT_EQ(RelativeToWorkdir(work_.path(), work_.path() + "-sibling/f"),
            work_.path() + "-sibling/f");
}

}  // namespace
}  // namespace agent::daemon::tools
