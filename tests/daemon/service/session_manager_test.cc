#include "daemon/service/session_manager.h"

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/fakes/event_recorder.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_model_client.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using ::agent::testing::FakeClock;
using Recorder = ::agent::testing::EventRecorder;
using ::agent::testing::FakeModelClient;
using ::agent::testing::FakeScript;

constexpr absl::Duration kIdle = absl::Minutes(10);
constexpr auto kBound = std::chrono::seconds(20);  // every wait in these tests is bounded

class SessionManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/session-manager-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = std::filesystem::canonical(tmpl).string();
    workdir_ = root_ + "/project";
    std::filesystem::create_directories(workdir_);
    setenv("XDG_CONFIG_HOME", (root_ + "/config").c_str(), 1);
    setenv("XDG_STATE_HOME", (root_ + "/state").c_str(), 1);
    registry_ = tools::ToolRegistry::CreateCore();
    script_ = std::make_shared<FakeScript>();
  }
  void TearDown() override {
    manager_.reset();
    std::filesystem::remove_all(root_);
  }

  SessionDeps Deps() {
    SessionDeps d;
    d.epoch = "test-epoch";
    d.tools = &registry_;
    auto script = script_;
    d.make_model_client = [script] { return std::make_unique<FakeModelClient>(script); };
    d.config.max_steps = 10;
    d.clock = &clock_;
    return d;
  }

  // A manager on the fake clock that sweeps only when the test calls SweepIdle.
  SessionManagerOptions ManualOptions() {
    SessionManagerOptions o;
    o.idle_unload = kIdle;
    o.sweep_thread = false;
    return o;
  }
  SessionManager& Start(SessionManagerOptions o) {
    manager_ = std::make_unique<SessionManager>(Deps(), std::move(o));
    return *manager_;
  }

  // A session the model answered once, so it is kept on disk.
  std::string NewSession(SessionManager& m) {
    auto s = NewUnansweredSession(m);
    if (!s) return "";
    Recorder rec;
    s->Attach(&rec, "t", false, "", 0);
    EXPECT_TRUE(s->SendPrompt("hi", "t").ok());
    EXPECT_TRUE(rec.WaitTurnEnded());
    s->Detach(&rec);
    return s->id();
  }
  std::shared_ptr<Session> NewUnansweredSession(SessionManager& m) {
    v1::CreateSessionRequest req;
    req.set_workdir(workdir_);
    req.set_policy(v1::POLICY_MODE_YES);
    auto s = m.Create(req);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : nullptr;
  }
  // Sessions saved by a manager that is gone: on disk, not loaded.
  std::vector<std::string> SavedSessions(int n) {
    SessionManager m(Deps());
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back(NewSession(m));
    return ids;
  }
  bool Listed(SessionManager& m, const std::string& id) {
    for (const v1::Session& s : m.List(workdir_, false)) {
      if (s.id() == id) return s.load_error().empty();
    }
    return false;
  }

  std::string root_;
  std::string workdir_;
  tools::ToolRegistry registry_;
  std::shared_ptr<FakeScript> script_;
  FakeClock clock_;
  std::unique_ptr<SessionManager> manager_;
};

TEST_F(SessionManagerTest, AWallClockSetBackDoesNotKeepAnIdleSessionLoaded) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  clock_.StepWall(-absl::Hours(1));
  clock_.Advance(kIdle);
  EXPECT_EQ(m.SweepIdle(), 1);
  EXPECT_FALSE(m.IsLoaded(id));
}

TEST_F(SessionManagerTest, ASessionWrittenWhileTheClockWasAheadIsNotTheNewestForever) {
  SessionManager& m = Start(ManualOptions());
  std::string before = NewSession(m);
  clock_.StepWall(absl::Hours(1));
  std::string ahead = NewSession(m);
  clock_.StepWall(-absl::Hours(1));  // corrected
  clock_.Advance(absl::Minutes(1));
  std::string after = NewSession(m);
  std::vector<std::string> order;
  for (const v1::Session& s : m.List(workdir_, false)) order.push_back(s.id());
  // `-c` takes the first: the session of now, not the one stamped an hour ahead.
  EXPECT_EQ(order, (std::vector<std::string>{after, before, ahead}));
}

TEST_F(SessionManagerTest, IdleSessionIsUnloadedAfterTheTimeoutListedAndReloadedByFind) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  clock_.Advance(kIdle - absl::Seconds(1));
  EXPECT_EQ(m.SweepIdle(), 0);
  EXPECT_TRUE(m.IsLoaded(id));

  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(m.SweepIdle(), 1);
  EXPECT_FALSE(m.IsLoaded(id));
  EXPECT_EQ(m.loaded_count(), 0);
  EXPECT_TRUE(Listed(m, id));  // from its files

  auto again = m.Find(id);  // its lock was released, so it loads again
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->id(), id);
  EXPECT_TRUE(m.IsLoaded(id));
}

TEST_F(SessionManagerTest, ASessionWithABackgroundJobIsNotIdleAndRemovingItEndsTheJob) {
  SessionManager& m = Start(ManualOptions());
  script_->Add(agent::testing::CallsReply(
      {{"bash", R"({"command":"exec sleep 30","background":true})"}}, "b"));
  script_->Add(agent::testing::TextReply("started"));
  std::string id = NewSession(m);
  clock_.Advance(2 * kIdle);
  EXPECT_EQ(m.SweepIdle(), 0);  // a dev server is work in progress
  ASSERT_TRUE(m.IsLoaded(id));
  std::shared_ptr<Session> s = *m.Find(id);
  EXPECT_TRUE(s->RunsBackgroundJobs());
  EXPECT_TRUE(m.Delete(id, "t").ok());  // not refused as "running"
  EXPECT_FALSE(s->RunsBackgroundJobs());
}

TEST_F(SessionManagerTest, FindRestartsTheIdleTime) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  clock_.Advance(kIdle - absl::Seconds(1));
  ASSERT_TRUE(m.Find(id).ok());
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(m.SweepIdle(), 0);
  clock_.Advance(kIdle);
  EXPECT_EQ(m.SweepIdle(), 1);
}

TEST_F(SessionManagerTest, AttachedSessionStaysAndItsIdleTimeStartsAtDetach) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  Session* s = m.Find(id)->get();  // the manager keeps it; no reference held here
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  clock_.Advance(2 * kIdle);
  EXPECT_EQ(m.SweepIdle(), 0);
  EXPECT_TRUE(m.IsLoaded(id));

  s->Detach(&rec);
  clock_.Advance(kIdle / 2);
  EXPECT_EQ(m.SweepIdle(), 0);  // idle since the last sweep saw it attached, not since Find
  clock_.Advance(kIdle / 2);
  EXPECT_EQ(m.SweepIdle(), 1);
}

TEST_F(SessionManagerTest, SessionWithARunningTurnStays) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  Session* s = m.Find(id)->get();
  script_->SetHold(true);
  ASSERT_TRUE(s->SendPrompt("hi", "t").ok());
  ASSERT_TRUE(script_->WaitHolding(absl::Seconds(20)));
  clock_.Advance(2 * kIdle);
  EXPECT_EQ(m.SweepIdle(), 0);
  EXPECT_TRUE(m.IsLoaded(id));

  script_->SetHold(false);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  ASSERT_TRUE(rec.WaitFor([](const v1::Event& e) {
    return e.has_turn_ended() ||
           (e.has_snapshot() && e.snapshot().state() == v1::SESSION_STATE_IDLE);
  }));
  s->Detach(&rec);
  clock_.Advance(kIdle);
  EXPECT_EQ(m.SweepIdle(), 1);
}

TEST_F(SessionManagerTest, SessionHeldByACallerStays) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  auto held = m.Find(id);  // as an RPC handler holds it between Find and its call
  ASSERT_TRUE(held.ok());
  clock_.Advance(2 * kIdle);
  EXPECT_EQ(m.SweepIdle(), 0);
  auto again = m.Find(id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->get(), held->get());
}

TEST_F(SessionManagerTest, SweepThreadUnloadsAfterAShortIdleTime) {
  std::string id = SavedSessions(1)[0];
  std::promise<std::string> unloaded;
  SessionManagerOptions o;
  o.idle_unload = absl::Milliseconds(50);
  o.after_unload = [&unloaded](const std::string& id) { unloaded.set_value(id); };
  SessionDeps d = Deps();
  d.clock = Clock::Real();  // the sweep thread waits in real time
  manager_ = std::make_unique<SessionManager>(std::move(d), std::move(o));
  SessionManager& m = *manager_;
  ASSERT_TRUE(m.Find(id).ok());
  auto done = unloaded.get_future();
  ASSERT_EQ(done.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(done.get(), id);
  EXPECT_FALSE(m.IsLoaded(id));
  EXPECT_TRUE(Listed(m, id));
  manager_.reset();  // before the promise its hook sets
}

TEST_F(SessionManagerTest, ZeroIdleTimeFromConfigNeverUnloads) {
  SessionDeps d = Deps();
  d.config.session_idle_unload_s = 0;
  SessionManager m(d);
  std::string id = NewSession(m);
  EXPECT_EQ(m.SweepIdle(), 0);
  EXPECT_TRUE(m.IsLoaded(id));
}

// The load of `slow` waits in before_load until the test opens the gate.
struct SlowLoad {
  std::string slow;
  std::promise<void> entered, joined;
  std::promise<void> gate;
  std::shared_future<void> gate_future = gate.get_future().share();
  std::atomic<int> loads{0};

  void Install(SessionManagerOptions& o) {
    o.before_load = [this](const std::string& id) {
      ++loads;
      if (id != slow) return;
      entered.set_value();
      gate_future.wait_for(kBound);
    };
    o.joined_load = [this](const std::string& id) {
      if (id == slow) joined.set_value();
    };
  }
};

TEST_F(SessionManagerTest, ConcurrentFindsOfOneIdShareOneLoad) {
  std::string id = SavedSessions(1)[0];
  SlowLoad slow;
  slow.slow = id;
  SessionManagerOptions o = ManualOptions();
  slow.Install(o);
  SessionManager& m = Start(std::move(o));
  auto first = std::async(std::launch::async, [&] { return m.Find(id); });
  ASSERT_EQ(slow.entered.get_future().wait_for(kBound), std::future_status::ready);
  auto second = std::async(std::launch::async, [&] { return m.Find(id.substr(0, 6)); });
  ASSERT_EQ(slow.joined.get_future().wait_for(kBound), std::future_status::ready);
  slow.gate.set_value();
  auto a = first.get();
  auto b = second.get();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();  // not FailedPrecondition from a second lock
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(slow.loads.load(), 1);
  manager_.reset();  // before `slow`, which its hooks use
}

TEST_F(SessionManagerTest, SlowLoadDoesNotBlockAnotherId) {
  std::vector<std::string> ids = SavedSessions(3);
  SlowLoad slow;
  slow.slow = ids[0];
  SessionManagerOptions o = ManualOptions();
  slow.Install(o);
  SessionManager& m = Start(std::move(o));
  std::string loaded = ids[1];
  ASSERT_TRUE(m.Find(loaded).ok());
  auto first = std::async(std::launch::async, [&] { return m.Find(ids[0]); });
  ASSERT_EQ(slow.entered.get_future().wait_for(kBound), std::future_status::ready);

  // While ids[0] loads: a loaded session, a session read from disk, a list, a new session.
  auto others = std::async(std::launch::async, [&] {
    bool ok = m.Find(loaded).ok() && m.Find(ids[2]).ok() && Listed(m, ids[2]);
    return ok && !NewSession(m).empty();
  });
  bool finished = others.wait_for(kBound) == std::future_status::ready;
  slow.gate.set_value();
  EXPECT_TRUE(finished) << "another id waited for the slow load";
  EXPECT_TRUE(others.get());
  EXPECT_TRUE(first.get().ok());
  manager_.reset();
}

TEST_F(SessionManagerTest, FailedLoadLeavesNoEntryAndIsTriedAgain) {
  std::string id = SavedSessions(1)[0];
  std::atomic<int> loads{0};
  SessionManagerOptions o = ManualOptions();
  o.before_load = [&loads](const std::string&) { ++loads; };
  SessionManager& m = Start(std::move(o));
  std::filesystem::resize_file(TranscriptPath(workdir_, id), 3);  // damaged
  auto r = m.Find(id);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(m.IsLoaded(id));
  auto again = m.Find(id);  // neither a cached failure nor a wait on a finished load
  EXPECT_EQ(again.status().code(), r.status().code());
  EXPECT_EQ(loads.load(), 2);
  manager_.reset();
}

TEST_F(SessionManagerTest, ASessionTheModelNeverAnsweredIsGoneOnceItsClientLeaves) {
  SessionManager& m = Start(ManualOptions());
  std::shared_ptr<Session> s = NewUnansweredSession(m);
  ASSERT_TRUE(s);
  const std::string id = s->id();
  const std::string transcript = TranscriptPath(workdir_, id);
  script_->Add(absl::UnavailableError("nothing listens on http://127.0.0.1:9/v1"));
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  ASSERT_TRUE(s->SendPrompt("hi", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  // The client still at its prompt keeps it: listed, and another prompt may still get through.
  EXPECT_TRUE(std::filesystem::exists(transcript));
  EXPECT_TRUE(Listed(m, id));
  s->Detach(&rec);
  EXPECT_FALSE(std::filesystem::exists(transcript));
  EXPECT_FALSE(std::filesystem::exists(SessionsDir(workdir_) + "/" + id + ".lock"));
  EXPECT_FALSE(Listed(m, id));
  EXPECT_TRUE(absl::IsNotFound(m.Find(id).status()));
  EXPECT_TRUE(absl::IsNotFound(s->SendPrompt("again", "t").status()));
}

TEST_F(SessionManagerTest, AnUnansweredPromptWithNobodyAttachedLeavesNoSession) {
  SessionManager& m = Start(ManualOptions());
  std::shared_ptr<Session> s = NewUnansweredSession(m);
  ASSERT_TRUE(s);
  script_->Add(absl::UnavailableError("nothing listens on http://127.0.0.1:9/v1"));
  Recorder watcher;  // attached and gone again before the prompt, as a script may be
  s->Attach(&watcher, "w", false, "", 0);
  s->Detach(&watcher);
  EXPECT_TRUE(s->discarded());  // an empty one-shot: nothing was ever asked
  EXPECT_FALSE(Listed(m, s->id()));
}

TEST_F(SessionManagerTest, AnAnsweredSessionStaysWhenItsClientLeaves) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);  // answered once, detached
  EXPECT_TRUE(Listed(m, id));
  EXPECT_TRUE(m.Find(id).ok());
}

TEST_F(SessionManagerTest, DeletingAnAttachedSessionTellsItsClientsAndEndsTheirStreams) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  auto s = m.Find(id);
  ASSERT_TRUE(s.ok());
  Recorder rec;
  (*s)->Attach(&rec, "viewer", false, "", 0);
  ASSERT_TRUE(m.Delete(id, "remover").ok());
  auto removed = rec.WaitFor([](const v1::Event& e) { return e.has_session_removed(); });
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->session_removed().client_name(), "remover");
  ASSERT_TRUE(rec.WaitEnded());
  EXPECT_TRUE(rec.end_status().ok()) << rec.end_status();
  EXPECT_EQ(rec.events().back()->kind_case(), v1::Event::kSessionRemoved);
  // Commands to it now say what happened.
  auto gone = m.Find(id);
  EXPECT_TRUE(absl::IsNotFound(gone.status()));
  EXPECT_NE(gone.status().message().find("was removed"), absl::string_view::npos);
  auto prompt = (*s)->SendPrompt("hi", "viewer");
  EXPECT_TRUE(absl::IsNotFound(prompt.status()));
  (*s)->Detach(&rec);
}

TEST_F(SessionManagerTest, ShutdownEndsTheStreamsAndRefusesNewWork) {
  SessionManager& m = Start(ManualOptions());
  std::string id = NewSession(m);
  auto s = m.Find(id);
  ASSERT_TRUE(s.ok());
  Recorder rec;
  (*s)->Attach(&rec, "viewer", false, "", 0);
  m.ShutdownAll();
  ASSERT_TRUE(rec.WaitEnded());
  EXPECT_TRUE(absl::IsUnavailable(rec.end_status())) << rec.end_status();
  EXPECT_TRUE(absl::IsUnavailable(m.Find(id).status()));
  v1::CreateSessionRequest req;
  req.set_workdir(workdir_);
  EXPECT_TRUE(absl::IsUnavailable(m.Create(req).status()));
  (*s)->Detach(&rec);
}

}  // namespace
}  // namespace agent::daemon
