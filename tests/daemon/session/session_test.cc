#include "daemon/session/session.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/mutex.h"
#include "daemon/policy/personal_rules.h"
#include "daemon/policy/rule_source.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/opening.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/event_recorder.h"
#include "tests/fakes/fake_model_client.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using ::agent::testing::CallsReply;
using Recorder = ::agent::testing::EventRecorder;
using ::agent::testing::FakeModelClient;
using ::agent::testing::FakeScript;
using ::agent::testing::TextReply;
using ::testing::HasSubstr;
using ::testing::Not;

// A read-only tool that takes `ms` milliseconds (the wait is the workload being measured).
class SlowReadTool : public tools::Tool {
 public:
  std::string_view Name() const override { return "slow_read"; }
  Json Schema() const override {
    return {{"type", "function"},
            {"function", {{"name", "slow_read"}, {"parameters", {{"type", "object"}}}}}};
  }
  bool Gated() const override { return false; }
  // {"ms": N} sleeps N ms. {"finish": K, "of": N}: waits (bounded) until N calls arrived, then
  // until K others finished, so N concurrent calls finish in the order their K give, whatever
  // order they were made in; a call that never met the others says "alone".
  tools::ToolOutcome Run(const Json& args, tools::ToolContext&) const override {
    if (!args.contains("finish")) {
      int ms = static_cast<int>(GetInt(args, "ms"));
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return {absl::StrCat("slept ", ms), false};
    }
    const int64_t finish = GetInt(args, "finish");
    const int64_t of = GetInt(args, "of");
    agent::MutexLock l(&mu_);
    ++arrived_;
    cv_.SignalAll();
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while ((arrived_ < of || finished_ < finish) && absl::Now() < deadline) {
      cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    const bool met = arrived_ >= of && finished_ == finish;
    ++finished_;
    cv_.SignalAll();
    return {met ? absl::StrCat("finished ", finish) : "alone", false};
  }

 private:
  mutable agent::Mutex mu_;
  mutable agent::CondVar cv_;
  mutable int64_t arrived_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
};

// Says whether its own call is in the session's files when it runs: a crash while a tool runs
// must leave the call on disk, so the load answers it.
class CallOnDiskTool : public tools::Tool {
 public:
  explicit CallOnDiskTool(std::function<std::vector<std::string>()> files)
      : files_(std::move(files)) {}
  std::string_view Name() const override { return "call_on_disk"; }
  Json Schema() const override {
    return {{"type", "function"},
            {"function", {{"name", "call_on_disk"}, {"parameters", {{"type", "object"}}}}}};
  }
  bool Gated() const override { return false; }
  tools::ToolOutcome Run(const Json&, tools::ToolContext& ctx) const override {
    for (const std::string& f : files_()) {
      absl::StatusOr<std::string> text = ReadFileToString(f);
      if (text.ok() && text->find(ctx.call_id) != std::string::npos) return {"on disk", false};
    }
    return {"not on disk", false};
  }

 private:
  std::function<std::vector<std::string>()> files_;
};

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/session-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    workdir_ = std::filesystem::canonical(tmpl).string();
    // The trust store (policy/trusted_rules.h) and other state stay out of the real home.
    state_ = workdir_ + "-state";
    setenv("XDG_STATE_HOME", state_.c_str(), 1);
    registry_ = tools::ToolRegistry::CreateCore();
    registry_.Add(std::make_unique<SlowReadTool>());
    registry_.Add(std::make_unique<CallOnDiskTool>([this] {
      return std::vector<std::string>{TranscriptPath(workdir_, session_->id()),
                                      JournalPath(workdir_, session_->id())};
    }));
    script_ = std::make_shared<FakeScript>();
  }
  void TearDown() override {
    session_.reset();
    std::filesystem::remove_all(workdir_);
    std::filesystem::remove_all(state_);
  }

  SessionDeps Deps() {
    SessionDeps d;
    d.epoch = "test-epoch";
    d.tools = &registry_;
    auto script = script_;
    d.make_model_client = [script] { return std::make_unique<FakeModelClient>(script); };
    d.config.max_steps = 10;
    if (rules_) {
      d.rules_for = [rules = rules_](const std::string&) { return rules; };
    } else {
      // What the daemon reads (server.cc): the project's settings and the person's own
      // settings.local.json, whose allow rules count as far as the trust store says.
      d.rules_for = [](const std::string& workdir) -> std::shared_ptr<policy::RuleSource> {
        std::string project = workdir + "/.agent/settings.json";
        std::string mine = policy::ProjectLocalSettingsPath(workdir);
        return std::make_shared<policy::FileRuleSource>(
            std::vector<std::string>{project, mine}, std::vector<std::string>{},
            policy::ProjectTrust{project, policy::TrustedRulesPath(), workdir, mine,
                                 policy::PersonalRulesPath()});
      };
    }
    return d;
  }

  std::shared_ptr<Session> NewSession(v1::PolicyMode policy = v1::POLICY_MODE_YES,
                                      int max_steps = 0) {
    SessionSettings s;
    s.model.model = "fake";
    s.policy = policy;
    s.max_steps = max_steps;
    auto created = CreateSession(workdir_, s, "", Deps());
    EXPECT_TRUE(created.ok()) << created.status();
    session_ = *created;
    return session_;
  }

  Json SavedTranscript() {
    auto text = ReadFileToString(TranscriptPath(workdir_, session_->id()));
    EXPECT_TRUE(text.ok());
    return Json::parse(*text);
  }

  std::string workdir_;
  std::string state_;
  tools::ToolRegistry registry_;
  std::shared_ptr<FakeScript> script_;
  std::shared_ptr<Session> session_;
  std::shared_ptr<policy::RuleSource> rules_;  // unset: the project's settings file
};

TEST_F(SessionTest, TurnEmitsEventsInOrderAndSavesEveryMessage) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(TextReply("hello there"));
  ASSERT_TRUE(s->SendPrompt("hi", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  std::vector<std::string> kinds;
  for (const EventPtr& e : rec.events()) {
    kinds.push_back(std::string(e->GetDescriptor()->FindFieldByNumber(e->kind_case())->name()));
  }
  EXPECT_THAT(
      kinds, ::testing::ElementsAre("snapshot", "clients_changed", "turn_started", "user_message",
                                    "text_delta", "text_delta", "assistant_message", "turn_ended"));
  uint64_t prev = 0;
  for (const EventPtr& e : rec.events()) {
    if (e->has_snapshot()) continue;
    EXPECT_EQ(e->seq(), prev + 1);
    prev = e->seq();
  }
  Json saved = SavedTranscript();
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_EQ(saved[2]["content"], "hello there");
  s->Detach(&rec);
}

// The save of the reply is written by the method that appended it, before it returns: nothing
// waits for a lock guard to go out of scope or for a later save.
TEST_F(SessionTest, AReplysCallsAreOnDiskBeforeAnyOfThemRuns) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"call_on_disk", "{}"}}, "c"));
  script_->Add(TextReply("done"));
  ASSERT_TRUE(s->SendPrompt("go", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  Json saved = SavedTranscript();
  ASSERT_EQ(saved.size(), 5u);
  EXPECT_EQ(saved[3]["role"], "tool");
  EXPECT_EQ(saved[3]["content"], "on disk");
  s->Detach(&rec);
}

TEST_F(SessionTest, ReadOnlyCallsRunConcurrentlyAndResultsKeepCallOrder) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  // The four calls meet (so they ran at once) and finish last call first.
  script_->Add(CallsReply({{"slow_read", R"({"finish":3,"of":4})"},
                           {"slow_read", R"({"finish":2,"of":4})"},
                           {"slow_read", R"({"finish":1,"of":4})"},
                           {"slow_read", R"({"finish":0,"of":4})"}},
                          "c"));
  script_->Add(TextReply("done"));
  ASSERT_TRUE(s->SendPrompt("go", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  Json saved = SavedTranscript();
  std::vector<std::string> order;
  for (const Json& m : saved) {
    if (m["role"] == "tool")
      order.push_back(m["tool_call_id"].get<std::string>() + " " + m["content"].get<std::string>());
  }
  EXPECT_THAT(order, ::testing::ElementsAre("c0 finished 3", "c1 finished 2", "c2 finished 1",
                                            "c3 finished 0"));
  s->Detach(&rec);
}

TEST_F(SessionTest, FirstApprovalWinsAndEveryClientSeesIt) {
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder a, b;
  s->Attach(&a, "alice", false, "", 0);
  s->Attach(&b, "bob", false, "", 0);
  script_->Add(CallsReply({{"write_file", R"({"path":"new.txt","content":"x\n"})"}}, "w"));
  script_->Add(TextReply("written"));
  ASSERT_TRUE(s->SendPrompt("write", "alice").ok());
  EventPtr req = b.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); });
  ASSERT_TRUE(req);
  EXPECT_THAT(req->approval_requested().approval().diff(), HasSubstr("+x"));
  EXPECT_EQ(s->Info().state(), v1::SESSION_STATE_WAITING_APPROVAL);
  EXPECT_TRUE(s->Approve("w0", v1::DECISION_ALLOW_ONCE, {}, "", "bob").ok());
  absl::Status second = s->Approve("w0", v1::DECISION_DENY, {}, "no", "alice");
  EXPECT_TRUE(absl::IsFailedPrecondition(second)) << second;
  ASSERT_TRUE(a.WaitTurnEnded());
  EventPtr resolved = a.WaitFor([](const v1::Event& e) { return e.has_approval_resolved(); });
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->approval_resolved().client_name(), "bob");
  EXPECT_TRUE(std::filesystem::exists(workdir_ + "/new.txt"));
  s->Detach(&a);
  s->Detach(&b);
}

TEST_F(SessionTest, RulesThatDoNotParseStopGatedCallsAndTheClientsAreToldOnce) {
  rules_ = std::make_shared<policy::FixedRuleSource>(
      absl::FailedPreconditionError("/c/config.json:3:12: bad rule \"bash(\""));
  auto s = NewSession(v1::POLICY_MODE_YES);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply(
      {{"bash", R"({"command":"touch a"})"}, {"bash", R"({"command":"touch b"})"}}, "b"));
  script_->Add(TextReply("stopped"));
  ASSERT_TRUE(s->SendPrompt("go", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  EXPECT_FALSE(std::filesystem::exists(workdir_ + "/a"));
  EXPECT_FALSE(std::filesystem::exists(workdir_ + "/b"));
  EXPECT_THAT(DumpJson(SavedTranscript()), HasSubstr("config.json:3:12"));
  int errors = 0;
  for (const EventPtr& e : rec.events()) errors += e->has_error() ? 1 : 0;
  EXPECT_EQ(errors, 1);
  EXPECT_THAT(std::string(s->RulesProblem().message()), HasSubstr("config.json:3:12"));
  s->Detach(&rec);
}

TEST_F(SessionTest, AProtectedPathIsAskedAboutWhateverTheRulesAllow) {
  policy::RuleSet allow;
  allow.allow.push_back(*policy::ParseRule("write_file"));
  rules_ = std::make_shared<policy::FixedRuleSource>(allow);
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"write_file", R"({"path":"plain.txt","content":"x"})"},
                           {"write_file", R"({"path":".agent/settings.json","content":"{}"})"}},
                          "w"));
  script_->Add(TextReply("done"));
  ASSERT_TRUE(s->SendPrompt("go", "t").ok());
  EventPtr req = rec.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); });
  ASSERT_TRUE(req);
  EXPECT_EQ(req->approval_requested().approval().call_id(), "w1");  // w0 ran on the rule
  EXPECT_TRUE(std::filesystem::exists(workdir_ + "/plain.txt"));
  ASSERT_TRUE(s->Approve("w1", v1::DECISION_DENY, {}, "", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  EXPECT_FALSE(std::filesystem::exists(workdir_ + "/.agent/settings.json"));
  s->Detach(&rec);
}

// A subscriber that writes as AttachReactor does: it defers the write from Deliver, and
// the write asks the session something, which needs the session's mutex to be free.
class DeferringSubscriber : public Subscriber, private DeferredWriter {
 public:
  explicit DeferringSubscriber(Session** session) : session_(session) {}
  void Deliver(const EventPtr&) override {
    ++delivered_;
    DeferWrite(this);
  }
  void StartDeferredWrite() override {
    // Info() takes the session's mutex: it would deadlock if the write ran under it.
    states_.push_back((*session_)->Info().state());
  }
  int delivered_ = 0;
  std::vector<v1::SessionState> states_;

 private:
  Session** session_;
};

TEST_F(SessionTest, WritesToClientsStartAfterTheSessionsMutexIsReleased) {
  auto s = NewSession();
  Session* raw = s.get();
  DeferringSubscriber sub(&raw);
  s->Attach(&sub, "w", false, "", 0);  // the snapshot and ClientsChanged
  EXPECT_EQ(sub.delivered_, 2);
  EXPECT_EQ(sub.states_.size(), 2u);  // both writes started once Attach released the mutex
  s->Detach(&sub);
}

TEST_F(SessionTest, PendingApprovalIsInTheSnapshotOfALateClient) {
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder first;
  s->Attach(&first, "first", false, "", 0);
  script_->Add(CallsReply({{"bash", R"({"command":"echo hi"})"}}, "b"));
  script_->Add(TextReply("ran"));
  ASSERT_TRUE(s->SendPrompt("run", "first").ok());
  ASSERT_TRUE(first.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); }));
  s->Detach(&first);  // nobody attached: the approval waits
  Recorder late;
  s->Attach(&late, "late", false, "", 0);
  EventPtr snap = late.events().front();
  ASSERT_TRUE(snap->has_snapshot());
  EXPECT_EQ(snap->snapshot().state(), v1::SESSION_STATE_WAITING_APPROVAL);
  EXPECT_EQ(snap->snapshot().pending_approval().call_id(), "b0");
  EXPECT_EQ(snap->snapshot().pending_approval().summary(), "echo hi");
  ASSERT_TRUE(s->Approve("b0", v1::DECISION_DENY, {}, "not now", "late").ok());
  ASSERT_TRUE(late.WaitTurnEnded());
  EXPECT_THAT(DumpJson(SavedTranscript()), HasSubstr("The user denied this call: not now"));
  s->Detach(&late);
}

TEST_F(SessionTest, AllowAlwaysRecordsPrefixRulesAndTheNextSimilarCallRunsWithoutAsking) {
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"bash", R"({"command":"echo one && git status -s"})"}}, "x"));
  script_->Add(TextReply("ok"));
  script_->Add(CallsReply({{"bash", R"({"command":"echo two && git status"})"}}, "y"));
  script_->Add(TextReply("ok again"));
  ASSERT_TRUE(s->SendPrompt("first", "t").ok());
  EventPtr req = rec.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); });
  ASSERT_TRUE(req);
  EXPECT_THAT(req->approval_requested().approval().proposed_rules(),
              ::testing::ElementsAre("bash(echo *)", "bash(git status *)"));
  EXPECT_THAT(req->approval_requested().approval().exact_rules(),
              ::testing::ElementsAre("bash(echo one)", "bash(git status -s)"));
  // A rule nobody proposed is refused, whichever list it is compared with.
  EXPECT_FALSE(s->Approve("x0", v1::DECISION_ALLOW_ALWAYS, {"bash(*)"}, "", "t").ok());
  ASSERT_TRUE(s->Approve("x0", v1::DECISION_ALLOW_ALWAYS, {}, "", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(1));
  // In the person's store in the state directory, nothing in the checkout.
  auto settings = ReadFileToString(policy::PersonalRulesPath());
  ASSERT_TRUE(settings.ok());
  EXPECT_THAT(*settings, HasSubstr("bash(git status *)"));
  EXPECT_FALSE(std::filesystem::exists(workdir_ + "/.agent"));
  ASSERT_TRUE(s->SendPrompt("second", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(2));
  int asked = 0;
  std::vector<std::string> notices;
  for (const EventPtr& e : rec.events()) {
    asked += e->has_approval_requested();
    if (e->has_notice()) notices.push_back(e->notice().text());
  }
  EXPECT_EQ(asked, 1);
  // The second call ran unasked: every client is told which learned rules let it.
  EXPECT_THAT(notices, ::testing::Contains("allowed by bash(echo *), bash(git status *)"));
  s->Detach(&rec);
}

TEST_F(SessionTest, AllowAlwaysExactlyRecordsTheExactCommandsOnly) {
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"bash", R"({"command":"git status -s"})"}}, "x"));
  script_->Add(TextReply("ok"));
  ASSERT_TRUE(s->SendPrompt("first", "t").ok());
  ASSERT_TRUE(rec.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); }));
  ASSERT_TRUE(s->Approve("x0", v1::DECISION_ALLOW_ALWAYS, {"bash(git status -s)"}, "", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(1));
  auto settings = ReadFileToString(policy::PersonalRulesPath());
  ASSERT_TRUE(settings.ok());
  EXPECT_THAT(*settings, HasSubstr("bash(git status -s)"));
  EXPECT_THAT(*settings, Not(HasSubstr("git status *")));
  s->Detach(&rec);
}

TEST_F(SessionTest, UntrustedProjectRulesAreToldOnceAndAllowAlwaysTrustsTheRule) {
  const std::string settings = workdir_ + "/.agent/settings.json";
  ASSERT_TRUE(WriteFileAtomically(settings, R"j({"allow": ["bash(echo one)"]})j").ok());
  rules_ = std::make_shared<policy::FileRuleSource>(
      std::vector<std::string>{settings}, std::vector<std::string>{},
      policy::ProjectTrust{settings, policy::TrustedRulesPath(), workdir_});
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"bash", R"({"command":"echo one"})"}}, "x"));
  script_->Add(TextReply("ok"));
  script_->Add(CallsReply({{"bash", R"({"command":"echo one"})"}}, "y"));
  script_->Add(TextReply("ok again"));
  ASSERT_TRUE(s->SendPrompt("first", "t").ok());
  // The repository's rule is ignored (the call is asked about), and said so.
  ASSERT_TRUE(rec.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); }));
  EXPECT_THAT(s->UntrustedRulesNotice(), HasSubstr(": bash(echo one). They are ignored"));
  // "Exactly": the project's own rule, not the prefix rule proposed first.
  ASSERT_TRUE(s->Approve("x0", v1::DECISION_ALLOW_ALWAYS, {"bash(echo one)"}, "", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(1));
  // A person chose it: trusted at once, so the next call runs and nothing more is said.
  EXPECT_EQ(s->UntrustedRulesNotice(), "");
  ASSERT_TRUE(s->SendPrompt("second", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(2));
  int asked = 0;
  std::vector<std::string> notices;
  for (const EventPtr& e : rec.events()) {
    asked += e->has_approval_requested();
    if (e->has_notice()) notices.push_back(e->notice().text());
  }
  EXPECT_EQ(asked, 1);
  // Told once about the untrusted rule, and then which rule let the second call run.
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_THAT(notices[0], HasSubstr("allows 1 rule(s) you have not trusted for this project"));
  EXPECT_EQ(notices[1], "allowed by bash(echo one)");
  s->Detach(&rec);
}

TEST_F(SessionTest, CancelWhileWaitingForApprovalSealsTheCall) {
  auto s = NewSession(v1::POLICY_MODE_ASK);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(
      CallsReply({{"bash", R"({"command":"echo hi"})"}, {"read_file", R"({"path":"a"})"}}, "k"));
  ASSERT_TRUE(s->SendPrompt("go", "t").ok());
  ASSERT_TRUE(rec.WaitFor([](const v1::Event& e) { return e.has_approval_requested(); }));
  auto was = s->Cancel("t");
  ASSERT_TRUE(was.ok());
  EXPECT_TRUE(*was);
  EventPtr end = rec.WaitTurnEnded();
  ASSERT_TRUE(end);
  EXPECT_EQ(end->turn_ended().outcome(), v1::TURN_OUTCOME_CANCELLED);
  auto t = Transcript::FromJson(SavedTranscript());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->ValidateForRequest().ok());
  s->Detach(&rec);
}

TEST_F(SessionTest, CancelDuringTheModelRequestEndsTheTurnAndTheNextOneWorks) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->SetHold(true);
  ASSERT_TRUE(s->SendPrompt("slow", "t").ok());
  ASSERT_TRUE(script_->WaitHolding(absl::Seconds(10)));
  ASSERT_TRUE(s->Cancel("t").ok());
  EventPtr end = rec.WaitTurnEnded();
  ASSERT_TRUE(end);
  EXPECT_EQ(end->turn_ended().outcome(), v1::TURN_OUTCOME_CANCELLED);
  script_->SetHold(false);
  script_->Add(TextReply("fine"));
  ASSERT_TRUE(s->SendPrompt("again", "t").ok());
  EventPtr end2 = rec.WaitTurnEnded(2);
  ASSERT_TRUE(end2);
  EXPECT_EQ(end2->turn_ended().outcome(), v1::TURN_OUTCOME_DONE);
  s->Detach(&rec);
}

TEST_F(SessionTest, PromptsFromTwoClientsAreQueuedInOrderAndBothAnswered) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "watch", false, "", 0);
  script_->SetHold(true);
  script_->Add(TextReply("answer A"));
  script_->Add(TextReply("answer B"));
  ASSERT_EQ(*s->SendPrompt("prompt A", "client-1"), 0);
  auto pos = s->SendPrompt("prompt B", "client-2");
  ASSERT_TRUE(pos.ok());
  EXPECT_EQ(*pos, 1);
  script_->SetHold(false);
  ASSERT_TRUE(rec.WaitTurnEnded(2));
  std::vector<std::string> users;
  for (const EventPtr& e : rec.events()) {
    if (e->has_user_message()) {
      users.push_back(e->user_message().text() + "/" + e->user_message().client_name());
    }
  }
  EXPECT_THAT(users, ::testing::ElementsAre("prompt A/client-1", "prompt B/client-2"));
  Json saved = SavedTranscript();
  EXPECT_EQ(saved.back()["content"], "answer B");
  s->Detach(&rec);
}

TEST_F(SessionTest, PromptSentDuringACompactionIsAnsweredAfterIt) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(TextReply("one"));
  script_->Add(TextReply("two"));
  ASSERT_TRUE(s->SendPrompt("a", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(1));
  ASSERT_TRUE(s->SendPrompt("b", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(2));
  script_->Add(TextReply("the summary"));
  script_->Add(TextReply("answer after compaction"));
  script_->SetHold(true);
  absl::StatusOr<int> compacted;
  std::thread compactor([&] { compacted = s->Compact(); });
  ASSERT_TRUE(script_->WaitHolding(absl::Seconds(10)));  // the summary request is out
  auto pos = s->SendPrompt("during", "t");
  ASSERT_TRUE(pos.ok()) << pos.status();
  script_->SetHold(false);
  compactor.join();
  ASSERT_TRUE(compacted.ok()) << compacted.status();
  EventPtr end = rec.WaitTurnEnded(3);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->turn_ended().outcome(), v1::TURN_OUTCOME_DONE);
  EXPECT_EQ(SavedTranscript().back()["content"], "answer after compaction");
  s->Detach(&rec);
}

TEST_F(SessionTest, ReadOnlyObserverCannotPromptApproveOrCancel) {
  auto s = NewSession();
  Recorder owner;  // keeps the unanswered session while the observer comes and goes
  s->Attach(&owner, "owner", false, "", 0);
  Recorder rec;
  s->Attach(&rec, "observer", /*read_only=*/true, "", 0);
  EXPECT_TRUE(absl::IsPermissionDenied(s->SendPrompt("hi", "observer").status()));
  EXPECT_TRUE(absl::IsPermissionDenied(s->Cancel("observer").status()));
  EXPECT_TRUE(
      absl::IsPermissionDenied(s->Approve("x", v1::DECISION_ALLOW_ONCE, {}, "", "observer")));
  s->Detach(&rec);
  // Once it has left, the name is an ordinary client again.
  script_->Add(TextReply("ok"));
  EXPECT_TRUE(s->SendPrompt("hi", "observer").ok());
  s->Detach(&owner);
}

TEST_F(SessionTest, AttachAfterSeqReplaysExactlyTheMissedEvents) {
  auto s = NewSession();
  Recorder first;
  s->Attach(&first, "c", false, "", 0);
  script_->Add(TextReply("one"));
  ASSERT_TRUE(s->SendPrompt("a", "c").ok());
  ASSERT_TRUE(first.WaitTurnEnded());
  uint64_t left_at = first.events().back()->seq();
  s->Detach(&first);
  script_->Add(TextReply("two"));
  Recorder during;  // sees everything of the second turn
  s->Attach(&during, "d", false, "", 0);
  ASSERT_TRUE(s->SendPrompt("b", "d").ok());
  ASSERT_TRUE(during.WaitTurnEnded());
  Recorder back;
  s->Attach(&back, "c", false, "test-epoch", left_at);
  std::vector<EventPtr> replay = back.events();
  ASSERT_FALSE(replay.empty());
  EXPECT_FALSE(replay.front()->has_snapshot());
  EXPECT_EQ(replay.front()->seq(), left_at + 1);
  // Exactly the events it missed: every seq after left_at, in order, none twice, and the
  // same events `during` saw live.
  std::map<uint64_t, std::string> live;
  for (const EventPtr& e : during.events()) {
    if (!e->has_snapshot()) live[e->seq()] = e->SerializeAsString();
  }
  for (size_t i = 0; i < replay.size(); ++i) {
    EXPECT_EQ(replay[i]->seq(), left_at + 1 + i);
    if (live.count(replay[i]->seq())) {
      EXPECT_EQ(live[replay[i]->seq()], replay[i]->SerializeAsString());
    }
  }
  EXPECT_GE(replay.back()->seq(), during.events().back()->seq());
  // Another epoch's numbers mean nothing: a snapshot instead.
  Recorder other;
  s->Attach(&other, "e", false, "old-epoch", left_at);
  EXPECT_TRUE(other.events().front()->has_snapshot());
  s->Detach(&during);
  s->Detach(&back);
  s->Detach(&other);
}

TEST_F(SessionTest, StepLimitEndsTheTurnWithMaxSteps) {
  auto s = NewSession(v1::POLICY_MODE_YES, /*max_steps=*/2);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"slow_read", R"({"ms":0})"}}, "m"));
  script_->Add(CallsReply({{"slow_read", R"({"ms":0})"}}, "n"));
  script_->Add(CallsReply({{"slow_read", R"({"ms":0})"}}, "o"));
  ASSERT_TRUE(s->SendPrompt("loop", "t").ok());
  EventPtr end = rec.WaitTurnEnded();
  ASSERT_TRUE(end);
  EXPECT_EQ(end->turn_ended().outcome(), v1::TURN_OUTCOME_MAX_STEPS);
  auto t = Transcript::FromJson(SavedTranscript());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->ValidateForRequest().ok());
  s->Detach(&rec);
}

TEST_F(SessionTest, ThePromptsOwnStepLimitWinsOverTheSessions) {
  auto s = NewSession(v1::POLICY_MODE_YES, /*max_steps=*/50);
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"slow_read", R"({"ms":0})"}}, "m"));
  v1::ClientSettings one_step;
  one_step.set_max_steps(1);
  ASSERT_TRUE(s->SendPrompt("loop", "t", {}, {}, {}, one_step).ok());
  EventPtr end = rec.WaitTurnEnded();
  ASSERT_TRUE(end);
  EXPECT_EQ(end->turn_ended().outcome(), v1::TURN_OUTCOME_MAX_STEPS);
  // A prompt that sets nothing runs with the session's limit again.
  script_->Add(CallsReply({{"slow_read", R"({"ms":0})"}}, "n"));
  script_->Add(TextReply("done"));
  ASSERT_TRUE(s->SendPrompt("again", "t").ok());
  end = rec.WaitTurnEnded(2);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->turn_ended().outcome(), v1::TURN_OUTCOME_DONE);
  s->Detach(&rec);
}

TEST_F(SessionTest, ThePromptsTransportSettingsReachItsRequests) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(TextReply("a"));
  script_->Add(TextReply("b"));
  v1::ClientSettings sent;
  sent.set_max_attempts(1);
  sent.set_idle_timeout_ms(300);
  sent.set_connect_timeout_ms(200);
  ASSERT_TRUE(s->SendPrompt("one", "t", {}, {}, {}, sent).ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  ASSERT_TRUE(s->SendPrompt("two", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded(2));
  agent::MutexLock l(&script_->mu);
  ASSERT_EQ(script_->transport.size(), 2u);
  EXPECT_EQ(script_->transport[0], (std::vector<int>{200, 300, 1}));
  Config daemon;  // the defaults: Deps() changes only max_steps
  EXPECT_EQ(script_->transport[1], (std::vector<int>{daemon.connect_timeout_ms,
                                                     daemon.idle_timeout_ms, daemon.max_attempts}));
  s->Detach(&rec);
}

TEST_F(SessionTest, CallCutByTheOutputLimitIsAnsweredNotRun) {
  auto s = NewSession();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  auto reply = CallsReply({{"write_file", R"({"path":"cut.txt","content":"par)"}}, "L");
  reply.finish_reason = "length";
  script_->Add(reply);
  script_->Add(TextReply("retrying later"));
  ASSERT_TRUE(s->SendPrompt("write", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  EXPECT_FALSE(std::filesystem::exists(workdir_ + "/cut.txt"));
  EXPECT_THAT(DumpJson(SavedTranscript()), HasSubstr("cut at the output limit"));
}

TEST_F(SessionTest, ToolsRunInTheSessionsCwdWhichALoadKeeps) {
  std::filesystem::create_directories(workdir_ + "/sub/dir");
  SessionSettings settings;
  settings.model.model = "fake";
  settings.policy = v1::POLICY_MODE_YES;
  settings.cwd = workdir_ + "/sub/dir";
  auto created = CreateSession(workdir_, settings, "", Deps());
  ASSERT_TRUE(created.ok()) << created.status();
  session_ = *std::move(created);
  created = absl::CancelledError("moved");  // the only reference is session_
  EXPECT_EQ(session_->Info().cwd(), workdir_ + "/sub/dir");
  Recorder rec;
  session_->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"bash", R"({"command":"pwd"})"}}, "b"));
  script_->Add(TextReply("done"));
  ASSERT_TRUE(session_->SendPrompt("where", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  session_->Detach(&rec);
  EXPECT_THAT(DumpJson(SavedTranscript()), HasSubstr(workdir_ + "/sub/dir\\n"));
  const std::string id = session_->id();
  session_.reset();
  auto loaded = LoadSession(workdir_, id, SessionSettings{}, Deps());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  session_ = *loaded;
  EXPECT_EQ(session_->Info().cwd(), workdir_ + "/sub/dir");
}

TEST_F(SessionTest, ACwdOutsideTheProjectFallsBackToTheProject) {
  SessionSettings settings;
  settings.cwd = "/tmp";
  auto created = CreateSession(workdir_, settings, "", Deps());
  ASSERT_TRUE(created.ok()) << created.status();
  session_ = *created;
  EXPECT_EQ(session_->Info().cwd(), "");
}

TEST_F(SessionTest, LoadSealsACallThatACrashLeftOpen) {
  auto s = NewSession();
  std::string id = s->id();
  session_.reset();
  s.reset();
  // What a kill -9 during a tool leaves on disk: the call saved, its result not.
  Json msgs = Json::array(
      {{{"role", "user"}, {"content", "hi"}},
       {{"role", "assistant"},
        {"content", nullptr},
        {"tool_calls", Json::array({{{"id", "open1"},
                                     {"type", "function"},
                                     {"function", {{"name", "bash"}, {"arguments", "{}"}}}}})}}});
  ASSERT_TRUE(SaveTranscript(workdir_, id, msgs).ok());
  SessionSettings settings;
  auto loaded = LoadSession(workdir_, id, settings, Deps());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  session_ = *loaded;
  Json saved = SavedTranscript();
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_THAT(std::string(saved[2]["content"]), HasSubstr("interrupted"));
  // A second owner is refused while this one holds the session.
  auto second = LoadSession(workdir_, id, settings, Deps());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
}

// After the daemon restarts (here: the session closed and loaded again), an edit still knows
// what the model read: one of an unchanged file runs, one of a file changed since is refused.
TEST_F(SessionTest, ALoadedSessionKnowsWhatTheModelReadBeforeTheRestart) {
  {
    std::ofstream(workdir_ + "/same.txt") << "one\n";
    std::ofstream(workdir_ + "/moved.txt") << "one\n";
  }
  auto s = NewSession();
  const std::string id = s->id();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply(
      {{"read_file", R"({"path": "same.txt"})"}, {"read_file", R"({"path": "moved.txt"})"}}, "r"));
  script_->Add(TextReply("read both"));
  ASSERT_TRUE(s->SendPrompt("read them", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  s->Detach(&rec);
  session_.reset();
  s.reset();  // closed: what a `daemon stop` or an idle unload does
  { std::ofstream(workdir_ + "/moved.txt") << "changed behind its back\n"; }
  SessionSettings settings;
  settings.policy = v1::POLICY_MODE_YES;
  auto loaded = LoadSession(workdir_, id, settings, Deps());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  session_ = *loaded;
  Recorder again;
  session_->Attach(&again, "t", false, "", 0);
  (void)session_->SetPolicy(v1::POLICY_MODE_YES, {});
  script_->Add(CallsReply(
      {{"edit_file", R"({"path": "same.txt", "old_string": "one", "new_string": "two"})"},
       {"edit_file", R"({"path": "moved.txt", "old_string": "behind", "new_string": "x"})"}},
      "e"));
  script_->Add(TextReply("edited"));
  ASSERT_TRUE(session_->SendPrompt("edit them", "t").ok());
  ASSERT_TRUE(again.WaitTurnEnded());
  Json saved = SavedTranscript();
  std::vector<std::string> results;
  for (const Json& m : saved) {
    if (m.value("role", "") == "tool") results.push_back(m.value("content", ""));
  }
  ASSERT_EQ(results.size(), 4u);
  EXPECT_THAT(results[2], Not(HasSubstr("before editing")));
  EXPECT_THAT(results[2], Not(HasSubstr("changed since")));
  EXPECT_THAT(results[3], HasSubstr("changed since you read it"));
  std::ifstream same(workdir_ + "/same.txt");
  std::string text((std::istreambuf_iterator<char>(same)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "two\n");
  session_->Detach(&again);
}

TEST_F(SessionTest, MetaFileIsWrittenAtTurnEndsAndALoadRecountsAStaleOne) {
  auto s = NewSession();
  std::string id = s->id();
  Recorder rec;
  s->Attach(&rec, "t", false, "", 0);
  script_->Add(CallsReply({{"read_file", R"({"path":"missing.txt"})"}}, "r"));
  script_->Add(TextReply("done"));
  ASSERT_TRUE(s->SendPrompt("look", "t").ok());
  ASSERT_TRUE(rec.WaitTurnEnded());
  s->Detach(&rec);
  // system, user, call, result, answer: the turn's end wrote the count.
  auto meta = LoadMeta(workdir_, id);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->message_count, 5);
  EXPECT_EQ(meta->title, "look");

  // A daemon that died inside a turn leaves the meta file behind the transcript.
  session_.reset();
  s.reset();
  SessionMeta stale = *meta;
  stale.message_count = 2;
  ASSERT_TRUE(SaveMeta(stale).ok());
  auto loaded = LoadSession(workdir_, id, SessionSettings{}, Deps());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  session_ = *loaded;
  meta = LoadMeta(workdir_, id);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->message_count, 5);
}

}  // namespace
}  // namespace agent::daemon
