#include "common/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::ScopedEnv;
using ::agent::testing::StatusIs;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::HasSubstr;

TEST(SocketPath, AgentSocketThenRuntimeDirThenTmpPerUser) {
  ScopedEnv env;
  env.Set("AGENT_SOCKET", "/x/my.sock");
  env.Set("XDG_RUNTIME_DIR", "/run/user/7");
  EXPECT_EQ(SocketPath(), "/x/my.sock");
  env.Unset("AGENT_SOCKET");
  EXPECT_EQ(SocketPath(), "/run/user/7/agent/agentd.sock");
  env.Set("XDG_RUNTIME_DIR", "");  // empty counts as unset
  EXPECT_EQ(SocketPath(), absl::StrCat("/tmp/agent-", ::getuid(), "/agentd.sock"));
}

TEST(StateDir, XdgStateHomeThenHomeThenTmp) {
  ScopedEnv env;
  env.Set("XDG_STATE_HOME", "/s");
  env.Set("HOME", "/h");
  EXPECT_EQ(StateDir(), "/s/agent");
  env.Unset("XDG_STATE_HOME");
  EXPECT_EQ(StateDir(), "/h/.local/state/agent");
  env.Unset("HOME");
  EXPECT_EQ(StateDir(), "/tmp/.local/state/agent");
}

TEST(ConfigDir, XdgConfigHomeThenHomeThenTmp) {
  ScopedEnv env;
  env.Set("XDG_CONFIG_HOME", "/c");
  env.Set("HOME", "/h");
  EXPECT_EQ(ConfigDir(), "/c/agent");
  env.Set("XDG_CONFIG_HOME", "");
  EXPECT_EQ(ConfigDir(), "/h/.config/agent");
  env.Unset("HOME");
  EXPECT_EQ(ConfigDir(), "/tmp/.config/agent");
}

int Mode(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
}

TEST(EnsurePrivateDir, CreatesTheDirectoryAndItsParentsPrivately) {
  TempDir t;
  ASSERT_THAT(EnsurePrivateDir(t.Join("a/b")), IsOk());
  EXPECT_EQ(Mode(t.Join("a")), 0700);
  EXPECT_EQ(Mode(t.Join("a/b")), 0700);
  EXPECT_THAT(EnsurePrivateDir(t.Join("a/b")), IsOk());  // again: nothing to do
}

TEST(EnsurePrivateDir, TightensAnOpenDirectory) {
  TempDir t;
  ASSERT_EQ(::mkdir(t.Join("d").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(t.Join("d").c_str(), 0777), 0);
  ASSERT_THAT(EnsurePrivateDir(t.Join("d")), IsOk());
  EXPECT_EQ(Mode(t.Join("d")), 0700);
}

TEST(EnsurePrivateDir, RefusesAFileAndASymlink) {
  TempDir t;
  WriteFile(t.Join("f"), "x");
  ASSERT_EQ(::mkdir(t.Join("real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(t.Join("real").c_str(), t.Join("link").c_str()), 0);
  EXPECT_THAT(EnsurePrivateDir(t.Join("f")), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(EnsurePrivateDir(t.Join("link")),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(t.Join("link"))));
}

TEST(EnsurePrivateDir, RefusesAnotherUsersDirectory) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  TempDir t;
  ASSERT_EQ(::mkdir(t.Join("d").c_str(), 0700), 0);
  ASSERT_EQ(::chown(t.Join("d").c_str(), 65534, 65534), 0);
  EXPECT_THAT(EnsurePrivateDir(t.Join("d")),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("another user")));
}

TEST(AbsolutePath, IsAbsoluteAndLexicallyNormal) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  const std::string here = cwd;
  EXPECT_EQ(AbsolutePath("/a/./b/../c/"), "/a/c");
  EXPECT_EQ(AbsolutePath("/"), "/");
  EXPECT_EQ(AbsolutePath("x/y"), (here == "/" ? "" : here) + "/x/y");
  EXPECT_EQ(AbsolutePath("."), here);
}

TEST(DirectoryInside, KeepsADirectoryOfTheProjectElseTheProject) {
  TempDir t;
  const std::string root = t.Join("project");
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((root + "/sub").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(t.Join("project-other").c_str(), 0700), 0);
  WriteFile(root + "/file", "x");
  ASSERT_EQ(::symlink("/tmp", (root + "/out").c_str()), 0);
  EXPECT_EQ(DirectoryInside(root, root + "/sub"), root + "/sub");
  EXPECT_EQ(DirectoryInside(root, root + "/sub/../sub/"), root + "/sub");
  EXPECT_EQ(DirectoryInside(root, root), root);
  EXPECT_EQ(DirectoryInside(root, ""), root);
  EXPECT_EQ(DirectoryInside(root, "sub"), root);                    // relative
  EXPECT_EQ(DirectoryInside(root, root + "/missing"), root);        // not there
  EXPECT_EQ(DirectoryInside(root, root + "/file"), root);           // not a directory
  EXPECT_EQ(DirectoryInside(root, root + "/out"), root);            // leads outside
  EXPECT_EQ(DirectoryInside(root, t.Join("project-other")), root);  // a prefix only
  EXPECT_EQ(DirectoryInside(root, "/"), root);
}

}  // namespace
}  // namespace agent
