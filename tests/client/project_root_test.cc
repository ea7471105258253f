#include "client/link/project_root.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::client {
namespace {

namespace fs = std::filesystem;

TEST(FindProjectTest, GitTopIsTheProjectAndCwdStaysWhereTheUserIs) {
  agent::testing::TempDir t;
  fs::create_directories(t.Join("repo/.git"));
  fs::create_directories(t.Join("repo/src/deep"));
  ProjectDirs d = FindProject(t.Join("repo/src/deep"));
  EXPECT_EQ(d.root, t.Join("repo"));
  EXPECT_EQ(d.cwd, t.Join("repo/src/deep"));
  EXPECT_EQ(FindProject(t.Join("repo/src/deep/")).cwd, t.Join("repo/src/deep"));
}

TEST(FindProjectTest, NearestAgentDirWinsAndAGitFileCounts) {
  agent::testing::TempDir t;
  fs::create_directories(t.Join("repo/.git"));
  fs::create_directories(t.Join("repo/tool/.agent"));
  fs::create_directories(t.Join("repo/tool/src"));
  EXPECT_EQ(FindProject(t.Join("repo/tool/src")).root, t.Join("repo/tool"));
  fs::create_directories(t.Join("wt/src"));
  std::ofstream(t.Join("wt/.git")) << "gitdir: /elsewhere\n";
  EXPECT_EQ(FindProject(t.Join("wt/src")).root, t.Join("wt"));
}

TEST(FindProjectTest, NoMarkerMeansTheDirectoryItself) {
  agent::testing::TempDir t;
  fs::create_directories(t.Join("plain/sub"));
  ProjectDirs d = FindProject(t.Join("plain/sub"));
  EXPECT_EQ(d.root, t.Join("plain/sub"));
  EXPECT_EQ(d.cwd, t.Join("plain/sub"));
}

TEST(FindProjectTest, ASymlinkedOrForeignMarkerDoesNotClaimTheDirectory) {
  agent::testing::TempDir t;
  fs::create_directories(t.Join("shared/elsewhere"));
  fs::create_directories(t.Join("shared/me"));
  fs::create_directory_symlink(t.Join("shared/elsewhere"), t.Join("shared/.agent"));
  EXPECT_EQ(FindProject(t.Join("shared/me")).root, t.Join("shared/me"));
  fs::remove(t.Join("shared/.agent"));
  fs::create_directories(t.Join("shared/.agent"));
  EXPECT_EQ(FindProject(t.Join("shared/me")).root, t.Join("shared"));
  // Another user's `.agent/` (as in a shared /tmp): needs root to create.
  if (::chown(t.Join("shared/.agent").c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "cannot chown (not root): the foreign-owner case is not checked";
  }
  EXPECT_EQ(FindProject(t.Join("shared/me")).root, t.Join("shared/me"));
}

}  // namespace
}  // namespace agent::client
