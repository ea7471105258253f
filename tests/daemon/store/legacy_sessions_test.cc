// Sessions a previous version left in <project>/.agent/sessions/ move to the state directory
// when a person asks, never on their own; what a repository shipped there stays where it is.
#include "daemon/store/legacy_sessions.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/json.h"
#include "daemon/store/sessions_dir.h"
#include "daemon/store/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

using ::agent::testing::IsSymlink;
using ::agent::testing::ListDir;
using ::agent::testing::ReadFile;
using ::agent::testing::ScopedEnv;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kTranscript[] = "[\n{\"role\":\"system\",\"content\":\"s\"}\n]\n";

class LegacySessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Set("XDG_STATE_HOME", state_.path());
    workdir_ = std::filesystem::canonical(project_.path()).string();
  }
  std::string Legacy(const std::string& name = "") const {
    return workdir_ + "/.agent/sessions" + (name.empty() ? "" : "/" + name);
  }
  // A session as the previous version left it: every file it wrote, the meta naming `workdir`.
  void OldSession(const std::string& id, const std::string& workdir) {
    WriteFile(Legacy(id + ".json"), kTranscript);
    WriteFile(Legacy(id + ".meta.json"),
              DumpJson(Json{{"id", id}, {"workdir", workdir}, {"title", "old " + id}}, 2));
    WriteFile(Legacy(id + ".compacted.jsonl"), "{\"summary\":\"s\"}\n");
    WriteFile(Legacy(id + ".checkpoints"), "{\"checkpoints\":[]}");
    WriteFile(Legacy(id + ".lock"), "");
  }
  std::string Sessions() const { return ProjectSessionsDir(workdir_); }
  // What `agent trust --sessions` would list, and so a person approves.
  std::vector<std::string> Listed() const {
    std::vector<std::string> ids;
    for (const LegacySession& s : ListLegacySessions(workdir_)) ids.push_back(s.id);
    return ids;
  }

  TempDir project_;
  TempDir state_;
  TempDir outside_;
  ScopedEnv env_;
  std::string workdir_;
};

// A repository can ship a session whose meta names the path its victims use, with its lock:
// nothing is taken until a person asks, and the person is told how, once.
TEST_F(LegacySessionsTest, NothingIsTakenOnItsOwnAndThePersonIsToldOnce) {
  OldSession("0123456789abcdef", workdir_);
  const std::string note = TakeMigrationNote(workdir_);
  EXPECT_THAT(note, HasSubstr(Legacy() + " holds 1 session(s) of an older agentd"));
  EXPECT_THAT(note, HasSubstr("agent trust --sessions"));
  EXPECT_EQ(TakeMigrationNote(workdir_), "");
  EXPECT_THAT(ListSessionIds(workdir_), IsEmpty());
  EXPECT_EQ(ListDir(Legacy()).size(), 5u);
  EXPECT_THAT(ListDir(state_.path()), IsEmpty());  // not even a directory made
  ASSERT_EQ(ListLegacySessions(workdir_).size(), 1u);
  EXPECT_EQ(ListLegacySessions(workdir_)[0].title, "old 0123456789abcdef");
}

TEST_F(LegacySessionsTest, APreviousVersionsSessionsMoveWithEveryFileWhenAPersonAsks) {
  OldSession("0123456789abcdef", workdir_);
  OldSession("fedcba9876543210", workdir_);
  WriteFile(workdir_ + "/.agent/.gitignore", "sessions/\n");
  WriteFile(workdir_ + "/.agent/settings.json", "{}");
  // Only what the person approved: one planted after the listing stays.
  const std::vector<std::string> approved = Listed();
  OldSession("aaaaaaaaaaaaaaaa", workdir_);

  LegacyMigration m = ImportLegacySessions(workdir_, approved);
  EXPECT_EQ(ListDir(Legacy()).size(), 5u);  // the one planted later
  for (const char* ext : {".json", ".meta.json", ".compacted.jsonl", ".checkpoints", ".lock"}) {
    ASSERT_EQ(::unlink(Legacy(std::string("aaaaaaaaaaaaaaaa") + ext).c_str()), 0);
  }
  ASSERT_EQ(::rmdir(Legacy().c_str()), 0);
  EXPECT_EQ(m.moved, 2);
  EXPECT_EQ(m.left, 5);
  EXPECT_THAT(m.note, HasSubstr("2 session(s) of this project moved from " + Legacy()));
  EXPECT_THAT(m.note, HasSubstr(Sessions()));
  EXPECT_THAT(
      ListDir(Sessions()),
      ElementsAre("0123456789abcdef.checkpoints", "0123456789abcdef.compacted.jsonl",
                  "0123456789abcdef.json", "0123456789abcdef.lock", "0123456789abcdef.meta.json",
                  "fedcba9876543210.checkpoints", "fedcba9876543210.compacted.jsonl",
                  "fedcba9876543210.json", "fedcba9876543210.lock", "fedcba9876543210.meta.json"));
  EXPECT_EQ(ReadFile(Sessions() + "/0123456789abcdef.json"), kTranscript);
  EXPECT_THAT(ListSessionIds(workdir_), ElementsAre("0123456789abcdef", "fedcba9876543210"));
  auto meta = LoadMeta(workdir_, "fedcba9876543210");
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->title, "old fedcba9876543210");
  // The emptied directory goes; what a team may have committed stays.
  EXPECT_THAT(ListDir(workdir_ + "/.agent"), ElementsAre(".gitignore", "settings.json"));

  EXPECT_EQ(ImportLegacySessions(workdir_, Listed()).moved, 0);  // nothing left to take
}

// A repository can ship `.agent/sessions/`: a meta naming another checkout, a session without
// its lock, a transcript or lock that is a symlink, a name that is no session id. None is
// imported, nothing they point at is read or changed, and the note says files were left.
TEST_F(LegacySessionsTest, ShippedFilesAreNeverImported) {
  OldSession("aaaaaaaaaaaaaaaa", "/home/author/project");
  OldSession("bbbbbbbbbbbbbbbb", workdir_);
  ASSERT_EQ(::unlink(Legacy("bbbbbbbbbbbbbbbb.lock").c_str()), 0);
  OldSession("cccccccccccccccc", workdir_);
  ASSERT_EQ(::unlink(Legacy("cccccccccccccccc.json").c_str()), 0);
  WriteFile(outside_.Join("victim.json"), "precious");
  ASSERT_EQ(
      ::symlink(outside_.Join("victim.json").c_str(), Legacy("cccccccccccccccc.json").c_str()), 0);
  OldSession("dddddddddddddddd", workdir_);
  ASSERT_EQ(::unlink(Legacy("dddddddddddddddd.lock").c_str()), 0);
  ASSERT_EQ(::symlink(outside_.Join("lock").c_str(), Legacy("dddddddddddddddd.lock").c_str()), 0);
  OldSession("e.e", workdir_);

  EXPECT_THAT(ListLegacySessions(workdir_), IsEmpty());
  LegacyMigration m = ImportLegacySessions(workdir_, Listed());
  EXPECT_EQ(m.moved, 0);
  EXPECT_EQ(m.left, 24);
  EXPECT_THAT(m.note, HasSubstr("24 file(s) in " + Legacy() + " were left there"));
  EXPECT_THAT(ListSessionIds(workdir_), IsEmpty());
  EXPECT_EQ(ListDir(Legacy()).size(), 24u);
  EXPECT_TRUE(IsSymlink(Legacy("cccccccccccccccc.json")));
  EXPECT_EQ(ReadFile(outside_.Join("victim.json")), "precious");
  EXPECT_THAT(ListDir(outside_.path()), ElementsAre("victim.json"));
}

TEST_F(LegacySessionsTest, ASymlinkedSessionsDirIsNotRead) {
  WriteFile(outside_.Join("0123456789abcdef.json"), kTranscript);
  WriteFile(outside_.Join("0123456789abcdef.meta.json"),
            DumpJson(Json{{"id", "0123456789abcdef"}, {"workdir", workdir_}}));
  WriteFile(outside_.Join("0123456789abcdef.lock"), "");
  std::filesystem::create_directories(workdir_ + "/.agent");
  ASSERT_EQ(::symlink(outside_.path().c_str(), Legacy().c_str()), 0);

  EXPECT_EQ(ImportLegacySessions(workdir_, Listed()).moved, 0);
  EXPECT_EQ(ListDir(outside_.path()).size(), 3u);
  EXPECT_THAT(ListSessionIds(workdir_), IsEmpty());
}

// An old agentd still running owns its session: it is left until it lets go.
TEST_F(LegacySessionsTest, ASessionWhoseOldLockIsHeldStays) {
  OldSession("0123456789abcdef", workdir_);
  OldSession("fedcba9876543210", workdir_);
  const int fd = ::open(Legacy("0123456789abcdef.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  LegacyMigration m = ImportLegacySessions(workdir_, Listed());
  ::close(fd);
  EXPECT_EQ(m.moved, 1);
  EXPECT_EQ(m.left, 5);
  EXPECT_THAT(ListSessionIds(workdir_), ElementsAre("fedcba9876543210"));
  EXPECT_EQ(ReadFile(Legacy("0123456789abcdef.json")), kTranscript);
}

TEST_F(LegacySessionsTest, AProjectWithoutOldSessionsGetsNothingInTheStateDirectory) {
  WriteFile(workdir_ + "/.agent/settings.json", "{}");
  EXPECT_EQ(TakeMigrationNote(workdir_), "");
  EXPECT_EQ(ImportLegacySessions(workdir_, Listed()).note, "");
  EXPECT_THAT(ListDir(state_.path()), IsEmpty());
}

}  // namespace
}  // namespace agent::daemon
