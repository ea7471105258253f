// Nothing acknowledged is lost to a storage fault: a session whose saves fail (EIO, a full disk)
// keeps its messages in memory, ends its turn with an error that says so, is not unloaded,
// writes everything once the disk is back, and a crash after that loses nothing. The disk is
// the session's seam (SessionFiles), failing on demand.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "daemon/service/session_manager.h"
#include "daemon/session/files.h"
#include "daemon/session/opening.h"
#include "daemon/session/session.h"
#include "daemon/store/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/event_recorder.h"
#include "tests/fakes/fake_model_client.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using ::agent::testing::CallsReply;
using ::agent::testing::EventRecorder;
using ::agent::testing::FakeModelClient;
using ::agent::testing::FakeScript;
using ::agent::testing::TextReply;
using ::testing::HasSubstr;

// The real files, unless `failing` is set: then every write fails as a full disk would.
struct Disk {
  agent::Mutex mu;
  bool failing ABSL_GUARDED_BY(mu) = false;
  bool whole_failing ABSL_GUARDED_BY(mu) = false;  // only writes of the file whole fail
  int whole_writes ABSL_GUARDED_BY(mu) = 0;
  int appends ABSL_GUARDED_BY(mu) = 0;
  void Fail(bool on) {
    agent::MutexLock l(&mu);
    failing = on;
  }
  void FailWhole(bool on) {
    agent::MutexLock l(&mu);
    whole_failing = on;
  }
};

class FaultyFiles : public SessionFiles {
 public:
  FaultyFiles(std::shared_ptr<Disk> disk, std::unique_ptr<SessionFiles> real)
      : disk_(std::move(disk)), real_(std::move(real)) {}
  absl::Status WriteTranscript(std::string_view text) override {
    if (auto s = Check(); !s.ok()) return s;
    {
      agent::MutexLock l(&disk_->mu);
      if (disk_->whole_failing) return absl::ResourceExhaustedError("rename: No space left");
      ++disk_->whole_writes;
    }
    return real_->WriteTranscript(text);
  }
  absl::Status AppendJournal(std::string_view lines) override {
    if (auto s = Check(); !s.ok()) return s;
    {
      agent::MutexLock l(&disk_->mu);
      ++disk_->appends;
    }
    return real_->AppendJournal(lines);
  }
  absl::Status WriteMeta(const SessionMeta& meta) override {
    if (auto s = Check(); !s.ok()) return s;
    return real_->WriteMeta(meta);
  }
  absl::Status Delete() override { return real_->Delete(); }

 private:
  absl::Status Check() {
    agent::MutexLock l(&disk_->mu);
    if (disk_->failing) return absl::ResourceExhaustedError("write: No space left on device");
    return absl::OkStatus();
  }
  std::shared_ptr<Disk> disk_;
  std::unique_ptr<SessionFiles> real_;
};

class SessionStorageFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/session-faults-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    workdir_ = std::filesystem::canonical(tmpl).string();
    state_ = workdir_ + "-state";
    setenv("XDG_STATE_HOME", state_.c_str(), 1);
    registry_ = tools::ToolRegistry::CreateCore();
  }
  void TearDown() override {
    std::filesystem::remove_all(workdir_);
    std::filesystem::remove_all(state_);
  }
  SessionDeps Deps() {
    SessionDeps d;
    d.epoch = "test";
    d.tools = &registry_;
    auto script = script_;
    d.make_model_client = [script] { return std::make_unique<FakeModelClient>(script); };
    d.config.max_steps = 10;
    d.files_for = [disk = disk_](const std::string& workdir, const std::string& id) {
      return std::make_unique<FaultyFiles>(disk, DiskSessionFiles(workdir, id));
    };
    return d;
  }
  std::shared_ptr<Session> NewSession() {
    SessionSettings s;
    s.model.model = "fake";
    s.policy = v1::POLICY_MODE_YES;
    auto created = CreateSession(workdir_, s, "", Deps());
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *created : nullptr;
  }
  // Runs one prompt whose reply reads a directory twice, then answers.
  v1::Event RunTurn(Session& s, EventRecorder& rec, int n) {
    script_->Add(CallsReply({{"list_dir", "{\"path\":\".\"}"}, {"list_dir", "{\"path\":\".\"}"}},
                            "t" + std::to_string(n) + "_"));
    script_->Add(TextReply("done " + std::to_string(n)));
    EXPECT_TRUE(s.SendPrompt("step " + std::to_string(n), "test").ok());
    daemon::EventPtr e = rec.WaitTurnEnded(n);
    EXPECT_NE(e, nullptr);
    return e ? *e : v1::Event{};
  }
  size_t SavedMessages(const std::string& id) {
    auto t = LoadTranscript(workdir_, id);
    return t.ok() ? t->size() : 0;
  }

  std::string workdir_, state_;
  tools::ToolRegistry registry_;
  std::shared_ptr<FakeScript> script_ = std::make_shared<FakeScript>();
  std::shared_ptr<Disk> disk_ = std::make_shared<Disk>();
};

TEST_F(SessionStorageFaultsTest, MessagesAreAppendedNotRewrittenWhileATurnRuns) {
  std::shared_ptr<Session> s = NewSession();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  RunTurn(*s, rec, 1);
  {
    agent::MutexLock l(&disk_->mu);
    // Created whole once, and whole at the end of the turn; the messages between were appended.
    EXPECT_EQ(disk_->whole_writes, 2);
    EXPECT_GE(disk_->appends,
              3);  // the prompt, the reply with its calls, their results, the answer
  }
  s->Detach(&rec);  // never while holding the disk's lock: a write takes it
}

TEST_F(SessionStorageFaultsTest, ATurnWhoseMessagesCouldNotBeSavedEndsWithAnError) {
  std::shared_ptr<Session> s = NewSession();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  disk_->Fail(true);
  v1::Event ended = RunTurn(*s, rec, 1);
  EXPECT_EQ(ended.turn_ended().outcome(), v1::TURN_OUTCOME_ERROR);
  EXPECT_THAT(ended.turn_ended().error(), HasSubstr("could not be saved"));
  EXPECT_THAT(ended.turn_ended().error(), HasSubstr("No space left"));
  EXPECT_THAT(ended.turn_ended().error(), ::testing::Not(HasSubstr("()")));
  EXPECT_TRUE(s->HasUnsaved());
  EXPECT_THAT(s->UnsavedError().message(), HasSubstr("No space left"));
  EXPECT_TRUE(s->Busy());  // so the idle sweep never unloads it
  s->Detach(&rec);
}

TEST_F(SessionStorageFaultsTest, AWholeWriteThatFailsAfterTheJournalTookEveryMessageLosesNothing) {
  std::shared_ptr<Session> s = NewSession();
  const std::string id = s->id();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  RunTurn(*s, rec, 1);
  disk_->FailWhole(true);  // the fold at the end of the next turn fails; its appends do not
  v1::Event ended = RunTurn(*s, rec, 2);
  EXPECT_EQ(ended.turn_ended().outcome(), v1::TURN_OUTCOME_DONE) << ended.turn_ended().error();
  EXPECT_FALSE(s->HasUnsaved());
  EXPECT_EQ(SavedMessages(id), static_cast<size_t>(s->Info().message_count()));
  int errors = 0, notices = 0;
  for (const daemon::EventPtr& e : rec.events()) {
    if (e->has_error()) ++errors;
    if (e->has_notice() &&
        e->notice().text().find("every message is saved in the session's journal") !=
            std::string::npos) {
      EXPECT_THAT(e->notice().text(), HasSubstr("No space left"));
      ++notices;
    }
  }
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(notices, 1);
  // The next save is whole again, and the journal it starts extends the new file.
  disk_->FailWhole(false);
  RunTurn(*s, rec, 3);
  EXPECT_EQ(SavedMessages(id), static_cast<size_t>(s->Info().message_count()));
  s->Detach(&rec);
}

TEST_F(SessionStorageFaultsTest, WhenTheDiskIsBackEverythingShownIsSavedAndSurvivesACrash) {
  std::shared_ptr<Session> s = NewSession();
  const std::string id = s->id();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  RunTurn(*s, rec, 1);
  disk_->Fail(true);
  RunTurn(*s, rec, 2);
  const size_t shown = s->Info().message_count();
  EXPECT_LT(SavedMessages(id), shown);
  EXPECT_FALSE(s->RetrySave());  // still failing
  disk_->Fail(false);
  EXPECT_TRUE(s->RetrySave());
  EXPECT_FALSE(s->HasUnsaved());
  EXPECT_EQ(SavedMessages(id), shown);
  // Appends after the recovery land in a journal that extends the rewritten file.
  RunTurn(*s, rec, 3);
  EXPECT_EQ(SavedMessages(id), static_cast<size_t>(s->Info().message_count()));
  s->Detach(&rec);
}

TEST_F(SessionStorageFaultsTest, ShutdownWritesWhatAFailedSaveLeftUnsaved) {
  std::shared_ptr<Session> s = NewSession();
  const std::string id = s->id();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  disk_->Fail(true);
  RunTurn(*s, rec, 1);
  const size_t shown = s->Info().message_count();
  disk_->Fail(false);
  s->Detach(&rec);
  s->Shutdown("test stops");  // a graceful `agent daemon stop` or an unload
  EXPECT_EQ(SavedMessages(id), shown);
}

TEST_F(SessionStorageFaultsTest, AStopNamesTheSessionsItCouldNotSave) {
  SessionManager m(Deps());
  v1::CreateSessionRequest req;
  req.set_workdir(workdir_);
  req.set_policy(v1::POLICY_MODE_YES);
  std::shared_ptr<Session> s = *m.Create(req);
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  disk_->Fail(true);
  RunTurn(*s, rec, 1);
  s->Detach(&rec);
  std::vector<std::string> unsaved = m.SaveUnsavedNow();
  ASSERT_EQ(unsaved.size(), 1u);
  EXPECT_THAT(unsaved[0], ::testing::StartsWith(s->id() + ": "));
  EXPECT_THAT(unsaved[0], HasSubstr("No space left"));
  disk_->Fail(false);  // the disk is back before the stop: nothing to name
  EXPECT_TRUE(m.SaveUnsavedNow().empty());
  EXPECT_FALSE(s->HasUnsaved());
}

TEST_F(SessionStorageFaultsTest, TheClientsAreToldOnceAndAgainWhenItIsSaved) {
  std::shared_ptr<Session> s = NewSession();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  disk_->Fail(true);
  RunTurn(*s, rec, 1);
  disk_->Fail(false);
  ASSERT_TRUE(s->RetrySave());
  int errors = 0, again = 0;
  for (const daemon::EventPtr& e : rec.events()) {
    if (e->has_error() && e->error().message().find("cannot save") != std::string::npos) ++errors;
    if (e->has_notice() && e->notice().text() == "the session is saved again") ++again;
  }
  EXPECT_EQ(errors, 1);
  EXPECT_EQ(again, 1);
  s->Detach(&rec);
}

TEST_F(SessionStorageFaultsTest, ACompactionThatCannotArchiveWhatItRemovesDoesNotHappen) {
  std::shared_ptr<Session> s = NewSession();
  const std::string id = s->id();
  EventRecorder rec;
  s->Attach(&rec, "test", false, "", 0);
  RunTurn(*s, rec, 1);
  RunTurn(*s, rec, 2);
  const size_t before = s->Info().message_count();
  // The archive cannot be written: its name is taken by a directory.
  std::filesystem::create_directories(SessionsDir(workdir_) + "/" + id + ".compacted.jsonl");
  script_->Add(TextReply("the summary"));
  absl::StatusOr<int> compacted = s->Compact();
  EXPECT_FALSE(compacted.ok());
  EXPECT_EQ(static_cast<size_t>(s->Info().message_count()), before);
  EXPECT_EQ(SavedMessages(id), before);  // nothing was dropped from disk either
  bool told = false;
  for (const daemon::EventPtr& e : rec.events()) {
    if (e->has_error() && e->error().message().find("cannot keep the messages it would remove") !=
                              std::string::npos) {
      told = true;
    }
  }
  EXPECT_TRUE(told);
  s->Detach(&rec);
}

}  // namespace
}  // namespace agent::daemon
