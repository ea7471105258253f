// The file tools write through directory descriptors (beneath.h): a directory swapped for a
// symlink between the path check and the write never sends the write outside the project or
// into a protected path, under a concurrent swapper.
#include "daemon/tools/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "daemon/tools/file_io.h"
#include "tests/daemon/tools/test_util.h"

namespace agent::daemon::tools {
namespace {

using testing::Exists;
using testing::TempDir;
using testing::WriteFile;

// The names in `dir` (without "." and "..").
int EntriesIn(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int n = 0;
  while (dirent* e = ::readdir(d)) {
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
  }
  ::closedir(d);
  return n;
}

// Writes `project/sub/f.txt` `writes` times, the path resolved once while `sub` is a real
// directory, while another thread keeps exchanging `sub` with a symlink to `target`
// (renameat2 RENAME_EXCHANGE: `sub` always exists, as one or the other). Returns how many
// writes succeeded.
int WriteWhileSwapping(const std::string& project, const std::string& target, int writes) {
  const std::string sub = project + "/sub";
  const std::string link = project + "/link";
  EXPECT_EQ(::mkdir(sub.c_str(), 0755), 0);
  EXPECT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  std::atomic<bool> done{false};
  std::thread swapper([&] {
    for (int i = 0; i < 10'000'000 && !done; ++i) {
      ::renameat2(AT_FDCWD, sub.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
    }
  });
  int ok = 0;
  for (int i = 0; i < writes; ++i) {
    if (ReplaceFileContent(project, sub + "/f.txt", "written\n").ok()) ++ok;
  }
  done = true;
  swapper.join();
  return ok;
}

TEST(BeneathTest, ASwappedDirectoryNeverRedirectsAWriteOutsideTheProject) {
  TempDir project;
  TempDir outside;
  char real[PATH_MAX];
  ASSERT_NE(::realpath(project.path().c_str(), real), nullptr);
  const int ok = WriteWhileSwapping(real, outside.path(), 3000);
  EXPECT_EQ(EntriesIn(outside.path()), 0) << "a write landed outside the project";
  EXPECT_GT(ok, 0);  // the writes while `sub` was the real directory went through
}

TEST(BeneathTest, ASwappedDirectoryNeverRedirectsAWriteIntoGitHooks) {
  TempDir project;
  char real[PATH_MAX];
  ASSERT_NE(::realpath(project.path().c_str(), real), nullptr);
  const std::string hooks = std::string(real) + "/.git/hooks";
  WriteFile(hooks + "/README", "hooks\n");
  WriteWhileSwapping(real, hooks, 3000);
  EXPECT_FALSE(Exists(hooks + "/f.txt"));
  EXPECT_EQ(EntriesIn(hooks), 1);  // no temp file left there either
}

TEST(BeneathTest, OpenParentBeneathRefusesASymlinkAndPlainsOnly) {
  TempDir project;
  TempDir outside;
  ASSERT_EQ(::symlink(outside.path().c_str(), project.Join("out").c_str()), 0);
  EXPECT_EQ(OpenParentBeneath(project.path(), "out/f", false, 0755).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(OpenParentBeneath(project.path(), "a/../f", true, 0755).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenParentBeneath(project.path(), "/etc/f", true, 0755).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<UniqueFd> made = OpenParentBeneath(project.path(), "new/deeper/f", true, 0755);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_TRUE(Exists(project.Join("new/deeper")));
}

}  // namespace
}  // namespace agent::daemon::tools
