// ShadowStore and RestoreOne: snapshots, changes, diffs, pruning, and that a restore never
// writes outside the project.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "daemon/checkpoints/restore.h"
#include "daemon/checkpoints/shadow_store.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::checkpoints {
namespace {

using agent::testing::ReadFile;
using agent::testing::TempDir;
using agent::testing::WriteFile;

class ShadowStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.Join("project");
    std::filesystem::create_directories(project_);
  }
  ShadowStore Open() {
    auto s = ShadowStore::Open(project_, tmp_.Join("state/checkpoints"));
    EXPECT_TRUE(s.ok()) << s.status();
    return *std::move(s);
  }
  std::string P(const std::string& rel) { return project_ + "/" + rel; }

  TempDir tmp_;
  std::string project_;
};

TEST_F(ShadowStoreTest, StoreLivesOutsideTheProject) {
  ShadowStore store = Open();
  EXPECT_EQ(store.dir().rfind(tmp_.Join("state/checkpoints/project-"), 0), 0u) << store.dir();
  EXPECT_FALSE(std::filesystem::exists(P(".git")));
}

TEST_F(ShadowStoreTest, UnchangedFilesGiveTheSameTree) {
  WriteFile(P("a.txt"), "a\n");
  ShadowStore store = Open();
  auto t1 = store.Snapshot();
  auto t2 = store.Snapshot();
  ASSERT_TRUE(t1.ok()) << t1.status();
  EXPECT_EQ(*t1, *t2);
  WriteFile(P("a.txt"), "b\n");
  auto t3 = store.Snapshot();
  EXPECT_NE(*t1, *t3);
}

TEST_F(ShadowStoreTest, ChangesNameEachKind) {
  WriteFile(P("keep.txt"), "k\n");
  WriteFile(P("edit.txt"), "1\n");
  WriteFile(P("gone.txt"), "g\n");
  WriteFile(P("run.sh"), "echo\n");
  ShadowStore store = Open();
  auto before = store.Snapshot();
  WriteFile(P("edit.txt"), "2\n");
  WriteFile(P("new.txt"), "n\n");
  ::unlink(P("gone.txt").c_str());
  ::chmod(P("run.sh").c_str(), 0755);
  auto after = store.Snapshot();
  auto changes = store.Changes(*before, *after);
  ASSERT_TRUE(changes.ok()) << changes.status();
  std::map<std::string, std::string> kinds;
  for (const TreeChange& c : *changes) kinds[c.path] = c.Kind();
  EXPECT_EQ(kinds, (std::map<std::string, std::string>{{"edit.txt", "modified"},
                                                       {"gone.txt", "deleted"},
                                                       {"new.txt", "created"},
                                                       {"run.sh", "mode"}}));
  auto diff = store.Diff(*before, *after);
  ASSERT_TRUE(diff.ok());
  EXPECT_NE(diff->find("--- a/edit.txt\n+++ b/edit.txt"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("-1\n+2\n"), std::string::npos) << *diff;
}

TEST_F(ShadowStoreTest, IgnoredSessionsAndGitAreNotRecorded) {
  WriteFile(P(".gitignore"), "build/\n");
  WriteFile(P("build/out.o"), "o");
  WriteFile(P(".agent/sessions/x.json"), "[]");
  WriteFile(P(".agent/settings.json"), "{}");
  WriteFile(P(".git/info/exclude"), "secret.txt\n");
  WriteFile(P(".git/config"), "[core]\n");
  WriteFile(P("secret.txt"), "s");
  WriteFile(P("src.c"), "int x;");
  ShadowStore store = Open();
  auto empty = store.Snapshot();
  ASSERT_TRUE(empty.ok());
  // Compare against a tree with every file removed: what is listed is what was recorded.
  std::filesystem::rename(project_, project_ + ".moved");
  std::filesystem::create_directories(project_);
  auto none = store.Snapshot();
  ASSERT_TRUE(none.ok()) << none.status();
  auto changes = store.Changes(*none, *empty);
  ASSERT_TRUE(changes.ok());
  std::vector<std::string> paths;
  for (const TreeChange& c : *changes) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{".agent/settings.json", ".gitignore", "src.c"}));
}

TEST_F(ShadowStoreTest, BlobsComeBackByteForByte) {
  std::string binary("a\0b\n\xff", 5);
  WriteFile(P("bin"), binary);
  ShadowStore store = Open();
  auto t0 = store.Snapshot();
  ::unlink(P("bin").c_str());
  auto t1 = store.Snapshot();
  auto changes = store.Changes(*t0, *t1);
  ASSERT_EQ(changes->size(), 1u);
  auto blobs = store.Blobs({(*changes)[0].old_blob});
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  EXPECT_EQ((*blobs)[0], binary);
}

TEST_F(ShadowStoreTest, AttributesOfTheProjectDoNotChangeWhatIsStored) {
  WriteFile(P(".gitattributes"), "* text eol=crlf\n*.txt ident filter=evil\n");
  const std::string crlf = "line one\r\nline two $Id$\r\n";
  WriteFile(P("a.txt"), crlf);
  ShadowStore store = Open();
  auto t0 = store.Snapshot();
  ::unlink(P("a.txt").c_str());
  auto t1 = store.Snapshot();
  auto changes = store.Changes(*t0, *t1);
  ASSERT_TRUE(changes.ok() && changes->size() == 1u);
  EXPECT_EQ((*store.Blobs({(*changes)[0].old_blob}))[0], crlf);
}

TEST_F(ShadowStoreTest, PruneForgetsByCountAndAge) {
  WriteFile(P("a"), "1");
  ShadowStore store = Open();
  auto t1 = store.Snapshot();
  WriteFile(P("a"), "2");
  auto t2 = store.Snapshot();
  WriteFile(P("a"), "3");
  auto t3 = store.Snapshot();
  ASSERT_TRUE(store.Keep("s-1", 1000, *t1, *t2).ok());
  ASSERT_TRUE(store.Keep("s-2", 2000, *t2, *t3).ok());
  EXPECT_EQ(*store.Prune(3000, 0, 5), 0);
  EXPECT_EQ(*store.Prune(3000, 0, 1), 1);  // the older one
  EXPECT_FALSE(store.HasObject(*t1));      // nothing keeps its tree
  EXPECT_TRUE(store.HasObject(*t2));
  EXPECT_EQ(*store.Prune(3000, 500, 0), 1);  // older than 500 ms
  EXPECT_FALSE(store.HasObject(*t2));
}

TEST_F(ShadowStoreTest, APinnedTreeOutlivesAnotherSessionsPrune) {
  WriteFile(P("a"), "running turn's before\n");
  ShadowStore store = Open();
  auto pinned = store.Snapshot();
  ASSERT_TRUE(store.Pin("session1", *pinned).ok());
  WriteFile(P("a"), "2");
  auto t2 = store.Snapshot();
  WriteFile(P("a"), "3");
  auto t3 = store.Snapshot();
  ASSERT_TRUE(store.Keep("session2-1", 1000, *t2, *t3).ok());
  EXPECT_EQ(*store.Prune(3000, 500, 0), 1);
  EXPECT_TRUE(store.HasObject(*pinned));
  EXPECT_FALSE(store.HasObject(*t2));
  EXPECT_FALSE(store.Pin("../x", *pinned).ok());
}

TEST_F(ShadowStoreTest, SymlinksAreRecordedNotFollowed) {
  WriteFile(tmp_.Join("outside/secret"), "s");
  std::filesystem::create_directory_symlink(tmp_.Join("outside"), P("link"));
  ShadowStore store = Open();
  auto t0 = store.Snapshot();
  ::unlink(P("link").c_str());
  auto t1 = store.Snapshot();
  auto changes = store.Changes(*t0, *t1);
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ((*changes)[0].path, "link");
  EXPECT_EQ((*changes)[0].old_mode, "120000");
}

// ---- RestoreOne ----

TEST(TreeChangeTest, OnlyAnExecBitChangeIsAModeChange) {
  TreeChange c{"f", "100644", "100755", "abc", "abc"};
  EXPECT_EQ(c.Kind(), "mode");
  // A file that became a symlink whose target text is the file's bytes: content, not a chmod.
  TreeChange to_link{"f", "100644", "120000", "abc", "abc"};
  EXPECT_EQ(to_link.Kind(), "modified");
  TreeChange to_file{"f", "120000", "100644", "abc", "abc"};
  EXPECT_EQ(to_file.Kind(), "modified");
}

TEST_F(ShadowStoreTest, APlantedFifoAsTheExcludeFileDoesNotBlock) {
  std::filesystem::create_directories(P(".git/info"));
  ASSERT_EQ(::mkfifo(P(".git/info/exclude").c_str(), 0600), 0);
  WriteFile(P("a.txt"), "a\n");
  ShadowStore store = Open();
  auto tree = store.Snapshot();  // returns: nothing writes the FIFO
  EXPECT_TRUE(tree.ok()) << tree.status();
}

TEST_F(ShadowStoreTest, TheUsersExcludeFileIsHonoured) {
  std::filesystem::create_directories(P(".git/info"));
  WriteFile(P(".git/info/exclude"), "secret.txt\n");
  WriteFile(P("secret.txt"), "s\n");
  WriteFile(P("a.txt"), "a\n");
  ShadowStore store = Open();
  auto empty = store.Snapshot();
  WriteFile(P("secret.txt"), "changed\n");
  auto after = store.Snapshot();
  EXPECT_EQ(*empty, *after);
}

TEST_F(ShadowStoreTest, TheProjectsOwnGitNeverRuns) {
  // A daemon whose PATH has a relative entry, and a repository that ships `git`.
  WriteFile(P("git"), "#!/bin/sh\ntouch \"" + tmp_.Join("ran") + "\"\nexit 1\n");
  ::chmod(P("git").c_str(), 0755);
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", (".:" + saved).c_str(), 1);
  ShadowStore store = Open();
  auto tree = store.Snapshot();
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_TRUE(tree.ok()) << tree.status();
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("ran")));
}

TEST_F(ShadowStoreTest, RestoreRefusesPathsOutsideTheProject) {
  for (const char* bad : {"../x", "/etc/x", "a/../../x", "", "a//b", ".git/hooks/pre-commit",
                          "sub/.GIT/config", ".agent/sessions/x.json", "./a"}) {
    EXPECT_FALSE(RestoreOne(project_, {bad, "100644", "x"}).ok()) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("x")));
}

TEST_F(ShadowStoreTest, RestoreDoesNotWriteThroughASymlinkedDirectory) {
  std::filesystem::create_directories(tmp_.Join("outside"));
  std::filesystem::create_directory_symlink(tmp_.Join("outside"), P("dir"));
  absl::Status s = RestoreOne(project_, {"dir/f", "100644", "x"});
  EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("outside/f")));
  s = RestoreOne(project_, {"dir/f", "000000", ""});
  EXPECT_FALSE(s.ok());
}

TEST_F(ShadowStoreTest, RestoreWritesFilesSymlinksModesAndRemoves) {
  ASSERT_TRUE(RestoreOne(project_, {"d/e/f.sh", "100755", "echo\n"}).ok());
  EXPECT_EQ(ReadFile(P("d/e/f.sh")), "echo\n");
  struct stat st;
  ASSERT_EQ(::stat(P("d/e/f.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  RestoreEntry chmod_only{"d/e/f.sh", "100644", "", /*mode_only=*/true};
  ASSERT_TRUE(RestoreOne(project_, chmod_only).ok());
  ASSERT_EQ(::stat(P("d/e/f.sh").c_str(), &st), 0);
  EXPECT_FALSE(st.st_mode & S_IXUSR);
  EXPECT_EQ(ReadFile(P("d/e/f.sh")), "echo\n");
  // A symlink to somewhere outside comes back as a link, its target never written.
  ASSERT_TRUE(RestoreOne(project_, {"l", "120000", "/etc/passwd"}).ok());
  EXPECT_TRUE(agent::testing::IsSymlink(P("l")));
  ASSERT_TRUE(RestoreOne(project_, {"l", "100644", "plain"}).ok());  // replaces the link itself
  EXPECT_EQ(ReadFile(P("l")), "plain");
  ASSERT_TRUE(RestoreOne(project_, {"d/e/f.sh", "000000", ""}).ok());
  EXPECT_FALSE(std::filesystem::exists(P("d")));  // emptied directories go too
}

}  // namespace
}  // namespace agent::daemon::checkpoints
