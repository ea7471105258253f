// Checkpointer: a checkpoint per turn that changed files, undo (with files changed since),
// rewind's restore, diffs, skipping, and a user's repository left exactly as it was.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "daemon/checkpoints/checkpointer.h"
#include "daemon/store/sessions_dir.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::checkpoints {
namespace {

using agent::testing::ReadFile;
using agent::testing::TempDir;
using agent::testing::WriteFile;

std::string Shell(const std::string& dir, const std::string& cmd) {
  std::string full = "cd '" + dir + "' && " + cmd + " 2>&1";
  std::string out;
  FILE* f = ::popen(full.c_str(), "r");
  if (f == nullptr) return "<popen failed>";
  char buf[4096];
  size_t n;
  while ((n = ::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  ::pclose(f);
  return out;
}

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.Join("project");
    std::filesystem::create_directories(project_);
  }
  std::unique_ptr<Checkpointer> Make(CheckpointConfig config = {}) {
    return std::make_unique<Checkpointer>(project_, "s1", config, tmp_.Join("stores"));
  }
  // One turn that runs `change` as its tool.
  std::vector<std::string> Turn(Checkpointer& c, int n, const std::function<void()>& change) {
    c.BeginTurn(n, n * 2, "prompt " + std::to_string(n) + "\nmore", 1000 * n);
    if (change) {
      c.BeforeTool();
      change();
    }
    return c.EndTurn(1000 * n + 1);
  }
  std::string P(const std::string& rel) { return project_ + "/" + rel; }
  bool Exec(const std::string& rel) {
    struct stat st;
    return ::stat(P(rel).c_str(), &st) == 0 && (st.st_mode & S_IXUSR);
  }

  TempDir tmp_;
  std::string project_;
};

TEST_F(CheckpointerTest, UndoRestoresEditsCreationsDeletionsAndModes) {
  WriteFile(P("edit.txt"), "old\n");
  WriteFile(P("gone.txt"), "keep me\n");
  WriteFile(P("run.sh"), "echo\n");
  auto c = Make();
  Turn(*c, 1, [&] {
    WriteFile(P("edit.txt"), "new\n");
    WriteFile(P("dir/new.txt"), "n\n");
    ::unlink(P("gone.txt").c_str());
    ::chmod(P("run.sh").c_str(), 0755);
  });
  ASSERT_EQ(c->List().size(), 1u);
  EXPECT_EQ(c->List()[0].files_changed, 4);
  EXPECT_EQ(c->List()[0].prompt, "prompt 1");
  EXPECT_EQ(c->List()[0].at_message, 2);

  auto dry = c->Undo(1, /*dry_run=*/true, false);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_FALSE(dry->restored);
  EXPECT_EQ(dry->files.size(), 4u);
  EXPECT_EQ(ReadFile(P("edit.txt")), "new\n");  // a dry run changes nothing

  auto r = c->Undo(1, false, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->restored) << r->message;
  EXPECT_EQ(ReadFile(P("edit.txt")), "old\n");
  EXPECT_EQ(ReadFile(P("gone.txt")), "keep me\n");
  EXPECT_FALSE(std::filesystem::exists(P("dir")));
  EXPECT_FALSE(Exec("run.sh"));
  EXPECT_TRUE(c->List().empty());
  EXPECT_TRUE(absl::IsFailedPrecondition(c->Undo(1, false, false).status()));
}

TEST_F(CheckpointerTest, TurnsThatChangeNothingRecordNothing) {
  WriteFile(P("a"), "1");
  auto c = Make();
  Turn(*c, 1, nullptr);                          // no tool
  Turn(*c, 2, [&] { WriteFile(P("a"), "1"); });  // a tool that wrote the same bytes
  EXPECT_TRUE(c->List().empty());
  Turn(*c, 3, [&] { WriteFile(P("a"), "2"); });
  ASSERT_EQ(c->List().size(), 1u);
  EXPECT_EQ(c->List()[0].turn, 3);
}

TEST_F(CheckpointerTest, AFileChangedSinceIsKeptUnlessOverwrite) {
  WriteFile(P("a"), "1");
  WriteFile(P("b"), "1");
  auto c = Make();
  Turn(*c, 1, [&] {
    WriteFile(P("a"), "2");
    WriteFile(P("b"), "2");
  });
  WriteFile(P("a"), "user");  // after the turn
  auto r = c->Undo(1, false, false);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& f : r->files) EXPECT_EQ(f.changed_since(), f.path() == "a") << f.path();
  EXPECT_EQ(ReadFile(P("a")), "user");
  EXPECT_EQ(ReadFile(P("b")), "1");
  EXPECT_NE(r->message.find("kept 1"), std::string::npos) << r->message;
  // Not done yet: the turn stays, and an overwrite finishes it ("b" is not in the way now).
  ASSERT_EQ(c->List().size(), 1u);
  auto again = c->Undo(1, /*dry_run=*/true, false);
  for (const auto& f : again->files) EXPECT_EQ(f.changed_since(), f.path() == "a") << f.path();
  ASSERT_TRUE(c->Undo(1, false, /*overwrite=*/true).ok());
  EXPECT_EQ(ReadFile(P("a")), "1");
  EXPECT_TRUE(c->List().empty());
}

TEST_F(CheckpointerTest, OverwriteRestoresAFileChangedSince) {
  WriteFile(P("a"), "1");
  auto c = Make();
  Turn(*c, 1, [&] { WriteFile(P("a"), "2"); });
  WriteFile(P("a"), "user");
  auto r = c->Undo(1, false, /*overwrite=*/true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadFile(P("a")), "1");
}

TEST_F(CheckpointerTest, UndoNTurnsAndRecordsSurviveAReload) {
  WriteFile(P("a"), "0");
  {
    auto c = Make();
    Turn(*c, 1, [&] { WriteFile(P("a"), "1"); });
    Turn(*c, 2, [&] { WriteFile(P("a"), "2"); });
    Turn(*c, 3, [&] { WriteFile(P("a"), "3"); });
  }
  auto c = Make();  // loaded from <state>/projects/<key>/sessions/s1.checkpoints
  ASSERT_EQ(c->List().size(), 3u);
  auto r = c->Undo(2, false, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->first_turn, 2);
  EXPECT_EQ(ReadFile(P("a")), "1");
  ASSERT_TRUE(c->Undo(1, false, false).ok());
  EXPECT_EQ(ReadFile(P("a")), "0");
}

// The record file may have been edited by hand (or copied from elsewhere).
TEST_F(CheckpointerTest, ARecordFileNamesOnlyObjectIds) {
  const std::string good(40, 'a');
  WriteFile(ProjectSessionsDir(project_) + "/s1.checkpoints",
            R"({"checkpoints": [{"turn": 1, "before": "../../etc", "after": ")" + good +
                R"("}, {"turn": 2, "before": ")" + good + R"(", "after": "HEAD"},
                {"turn": 3, "before": ")" +
                good + R"(", "after": ")" + good + R"("}]})");
  auto c = Make();
  ASSERT_EQ(c->List().size(), 1u);
  EXPECT_EQ(c->List()[0].turn, 3);
  // A tree the store does not hold is a pruned checkpoint, not something to follow.
  EXPECT_TRUE(absl::IsFailedPrecondition(c->Undo(1, false, false).status()));
}

TEST_F(CheckpointerTest, ARewindAfterACompactionUndoesOnlyTheTurnsFromThere) {
  auto c = Make();
  Turn(*c, 1, [&] { WriteFile(P("a"), "1"); });  // begins at message 2
  Turn(*c, 2, [&] { WriteFile(P("a"), "2"); });  // 4
  Turn(*c, 3, [&] { WriteFile(P("a"), "3"); });  // 6
  c->Compacted(1, 4);  // messages 1..4 became one summary: turn 3 now begins at message 3
  auto r = c->RestoreFrom(3, false, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ReadFile(P("a")), "2");
  // Reloaded from its file, the positions are the moved ones.
  auto again = Make();
  ASSERT_EQ(again->List().size(), 2u);
  EXPECT_EQ(again->List()[1].at_message, 1);
}

TEST_F(CheckpointerTest, RestoreFromAMessageUndoesTheTurnsFromThere) {
  WriteFile(P("a"), "0");
  auto c = Make();
  Turn(*c, 1, [&] { WriteFile(P("a"), "1"); });  // at_message 2
  Turn(*c, 2, [&] { WriteFile(P("a"), "2"); });  // at_message 4
  auto r = c->RestoreFrom(4, false, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadFile(P("a")), "1");
  EXPECT_FALSE(c->RestoreFrom(100, false, false)->restored);
}

TEST_F(CheckpointerTest, DiffOfATurnAndOfTheSession) {
  WriteFile(P("a"), "0\n");
  auto c = Make();
  Turn(*c, 1, [&] { WriteFile(P("a"), "1\n"); });
  Turn(*c, 2, [&] { WriteFile(P("b"), "b\n"); });
  WriteFile(P("c"), "user\n");
  auto d1 = c->Diff(1);
  ASSERT_TRUE(d1.ok()) << d1.status();
  EXPECT_NE(d1->find("-0\n+1\n"), std::string::npos) << *d1;
  EXPECT_EQ(d1->find("b/b"), std::string::npos) << *d1;
  auto all = c->Diff(0);
  EXPECT_NE(all->find("+++ b/b"), std::string::npos) << *all;
  EXPECT_NE(all->find("+++ b/c"), std::string::npos) << *all;  // the files now
  EXPECT_EQ(*c->Diff(7), "");
}

TEST_F(CheckpointerTest, OffByConfigSaysSoOnce) {
  CheckpointConfig off;
  off.enabled = false;
  auto c = Make(off);
  auto n1 = Turn(*c, 1, [&] { WriteFile(P("a"), "1"); });
  auto n2 = Turn(*c, 2, [&] { WriteFile(P("a"), "2"); });
  ASSERT_EQ(n1.size(), 1u);
  EXPECT_NE(n1[0].find("off"), std::string::npos);
  EXPECT_TRUE(n2.empty());
  EXPECT_TRUE(c->List().empty());
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("stores")));
  EXPECT_TRUE(absl::IsFailedPrecondition(c->Undo(1, false, false).status()));
  // A rewind that asks for the files back is told they cannot come back.
  EXPECT_FALSE(c->RestoreFrom(0, false, false).ok());
}

TEST_F(CheckpointerTest, AProjectOverTheSizeLimitIsSkipped) {
  WriteFile(P("big"), std::string((1 << 20) + 10, 'x'));
  CheckpointConfig small;
  small.max_project_mb = 1;
  auto c = Make(small);
  auto n = Turn(*c, 1, [&] { WriteFile(P("a"), "1"); });
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("exceed 1 MB"), std::string::npos) << n[0];
  EXPECT_TRUE(c->List().empty());
}

std::string Noise(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

TEST_F(CheckpointerTest, TheSizeLimitIsCheckedBeforeEverySnapshot) {
  CheckpointConfig small;
  small.max_project_mb = 1;
  WriteFile(P("a"), "0");
  auto c = Make(small);
  EXPECT_TRUE(Turn(*c, 1, [&] { WriteFile(P("a"), "1"); }).empty());
  ASSERT_EQ(c->List().size(), 1u);
  // The project grows past the limit mid-session: that turn gets no checkpoint, said once.
  auto n = Turn(*c, 2, [&] { WriteFile(P("grown"), std::string((1 << 20) + 10, 'x')); });
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("exceed 1 MB"), std::string::npos) << n[0];
  EXPECT_EQ(c->List().size(), 1u);
}

TEST_F(CheckpointerTest, AFileOverTheSizeLimitIsLeftOutUnreadAndSaidSo) {
  CheckpointConfig config;
  config.max_file_mb = 1;
  WriteFile(P("small"), "v0\n");
  WriteFile(P("log"), "short\n");
  auto c = Make(config);
  Turn(*c, 1, [&] { WriteFile(P("small"), "v1\n"); });
  // A 2 GB sparse file (never read: a hash of it would take seconds) and a recorded file that
  // grows past the limit.
  auto n = Turn(*c, 2, [&] {
    WriteFile(P("small"), "v2\n");
    WriteFile(P("sparse"), "");
    ASSERT_EQ(::truncate(P("sparse").c_str(), 2LL << 30), 0);
    WriteFile(P("log"), std::string((1 << 20) + 10, 'l'));
  });
  EXPECT_TRUE(n.empty()) << n[0];
  ASSERT_EQ(c->List().size(), 2u);
  EXPECT_EQ(c->List()[1].left_out, (std::vector<std::string>{"log", "sparse"}));
  EXPECT_EQ(c->List()[1].files_changed, 1);  // small only
  auto diff = c->Diff(2);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_NE(diff->find("+v2"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("# not checkpointed (over 1 MB"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("#   sparse\n"), std::string::npos) << *diff;
  auto undone = c->Undo(1, false, false);
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_EQ(ReadFile(P("small")), "v1\n");
  EXPECT_EQ(std::filesystem::file_size(P("log")), (1u << 20) + 10);  // not put back to "short"
  EXPECT_EQ(std::filesystem::file_size(P("sparse")), 2ULL << 30);
  EXPECT_NE(undone->message.find("log, sparse"), std::string::npos) << undone->message;
  // Back under the limit, the file is recorded again.
  EXPECT_TRUE(Turn(*c, 3, [&] { WriteFile(P("log"), "short again\n"); }).empty());
  ASSERT_EQ(c->List().size(), 2u);
  EXPECT_TRUE(c->List()[1].left_out == (std::vector<std::string>{"sparse"}));
  EXPECT_EQ(c->List()[1].files_changed, 1);  // log
}

TEST_F(CheckpointerTest, TheStoresDiskUseIsLimitedLooseObjectsIncluded) {
  CheckpointConfig config;
  config.max_store_mb = 1;
  WriteFile(P("data"), Noise(300 << 10, 0));
  auto c = Make(config);
  for (int i = 1; i <= 8; ++i) {
    Turn(*c, i, [&] { WriteFile(P("data"), Noise(300 << 10, static_cast<unsigned>(i))); });
    // 300 KiB that do not compress, a new version each turn: 2.4 MB of objects unbounded.
    EXPECT_LT(DirectoryBytes(tmp_.Join("stores")), (1u << 20) + (400u << 10)) << "turn " << i;
  }
  // The newest checkpoints are kept: the last turn can be undone.
  auto undone = c->Undo(1, false, false);
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_EQ(ReadFile(P("data")), Noise(300 << 10, 7));
}

TEST_F(CheckpointerTest, PrunedByCount) {
  CheckpointConfig two;
  two.max_count = 2;
  WriteFile(P("a"), "0");
  auto c = Make(two);
  for (int i = 1; i <= 3; ++i) Turn(*c, i, [&] { WriteFile(P("a"), std::to_string(i)); });
  auto r = c->Undo(3, false, false);  // reaches turn 1, whose trees are gone
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_TRUE(c->Undo(2, false, false).ok());
  EXPECT_EQ(ReadFile(P("a")), "1");
}

TEST_F(CheckpointerTest, AUsersRepositoryIsLeftByteForByte) {
  if (Shell(project_, "git --version").find("git version") == std::string::npos) GTEST_SKIP();
  const std::string git =
      "env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE git -c user.name=t -c user.email=t@t ";
  WriteFile(P("tracked.txt"), "v1\n");
  WriteFile(P("stashed.txt"), "s1\n");
  Shell(project_, git + "init -q && " + git + "add . && " + git + "commit -qm one");
  WriteFile(P("stashed.txt"), "s2\n");
  Shell(project_, git + "stash -q");
  WriteFile(P("tracked.txt"), "v2 staged\n");
  Shell(project_, git + "add tracked.txt");
  WriteFile(P("tracked.txt"), "v3 unstaged\n");
  WriteFile(P("untracked.txt"), "u\n");
  WriteFile(P(".agent/.gitignore"), "sessions/\n");  // as the previous version left it
  // --no-optional-locks: a plain `git status` rewrites a stat-dirty index itself (new mtime,
  // same bytes), which would be git's change, not ours. Times to the nanosecond, so that any
  // write under .git/ shows.
  auto state = [&] {
    return Shell(project_,
                 git + "--no-optional-locks status --porcelain=v2 --branch && " + git +
                     "stash list && " + git + "rev-parse HEAD && " + git + "branch -a && " + git +
                     "diff --cached && ls -ld --full-time .git && ls -lA --full-time .git && " +
                     "md5sum .git/index");
  };
  const std::string before = state();
  auto c = Make();
  Turn(*c, 1, [&] {
    WriteFile(P("tracked.txt"), "agent\n");
    WriteFile(P("agent.txt"), "a\n");
  });
  ASSERT_EQ(c->List().size(), 1u);
  ASSERT_TRUE(c->Undo(1, false, false).ok());
  EXPECT_EQ(ReadFile(P("tracked.txt")), "v3 unstaged\n");
  EXPECT_EQ(state(), before);
}

}  // namespace
}  // namespace agent::daemon::checkpoints
