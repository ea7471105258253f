// The turn loop on its own (daemon/session/turn.h), against a fake TurnHost that keeps a real
// Transcript: no gRPC server, no disk, no session.
#include "daemon/session/turn.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "common/transcript.h"
#include "daemon/llm/request_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_model_client.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using testing::CallsReply;
using ::testing::ElementsAre;
using testing::FakeModelClient;
using testing::FakeScript;
using ::testing::HasSubstr;
using testing::TextReply;

class CountingTool : public tools::Tool {
 public:
  CountingTool(std::string name, bool gated) : name_(std::move(name)), gated_(gated) {}
  std::string_view Name() const override { return name_; }
  Json Schema() const override {
    return {{"type", "function"}, {"function", {{"name", name_}, {"parameters", Json::object()}}}};
  }
  bool Gated() const override { return gated_; }
  bool Concurrent() const override { return !gated_; }
  tools::ToolOutcome Run(const Json& args, tools::ToolContext&) const override {
    ++runs;
    return {absl::StrCat(name_, " ran with ", args.dump())};
  }
  mutable std::atomic<int> runs{0};

 private:
  std::string name_;
  bool gated_;
};

// Records what the loop asked of its session, in order, and keeps the transcript by the rule.
class FakeHost : public TurnHost, public llm::StreamSink {
 public:
  FakeHost() {
    (void)transcript.AppendSystem("system");
    (void)transcript.AppendUser("do it");
    auto registry = std::make_shared<tools::ToolRegistry>();
    auto look = std::make_unique<CountingTool>("look", false);
    auto change = std::make_unique<CountingTool>("change", true);
    look_ = look.get();
    change_ = change.get();
    registry->Add(std::move(look));
    registry->Add(std::move(change));
    tools_ = registry;
  }

  absl::StatusOr<llm::ModelRequest> NextRequest(const tools::ToolRegistry& tools) override {
    log.push_back("request");
    if (absl::Status s = transcript.ValidateForRequest(); !s.ok()) return s;
    llm::ModelRequest r;
    r.messages = transcript.messages();
    r.tools = tools.Schemas();
    return r;
  }
  llm::StreamSink* Stream() override { return this; }
  void KeepStreamedText() override {
    log.push_back("keep:" + streamed);
    if (!streamed.empty()) (void)transcript.AppendAssistant({{"content", streamed}});
  }
  absl::Status AppendReply(const llm::ModelReply& reply) override {
    streamed.clear();
    log.push_back(absl::StrCat("reply:", reply.tool_calls.size()));
    return transcript.AppendAssistant(llm::AssistantMessageFromReply(reply));
  }
  void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                     const std::vector<tools::ToolOutcome>& outcomes) override {
    log.push_back(absl::StrCat("results:", outcomes.size()));
    for (size_t k = 0; k < outcomes.size(); ++k) {
      EXPECT_TRUE(transcript.AppendToolResult(calls[first + k].id, outcomes[k].content).ok());
    }
  }
  bool ShouldCompact() override { return compact_next_.exchange(false); }
  absl::Status CompactTranscript() override {
    log.push_back("compact");
    return absl::OkStatus();
  }
  std::shared_ptr<const tools::ToolRegistry> StepTools() override { return tools_; }
  void CallReady(const llm::ToolCall& call) override { log.push_back("ready:" + call.id); }
  std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call, const Json&) override {
    log.push_back("ask:" + call.id);
    return authorize ? authorize(call) : std::nullopt;
  }
  tools::ToolContext MakeToolContext(const std::string& call_id) override {
    tools::ToolContext ctx;
    ctx.call_id = call_id;
    return ctx;
  }
  void OnText(std::string_view text) override { streamed.append(text); }
  void OnReasoning(std::string_view) override {}
  void OnToolCallStarted(std::string_view, std::string_view) override {}
  void OnRetry(int, int, int64_t, std::string_view) override {}

  void CompactBeforeNextRequest() { compact_next_ = true; }
  int look_runs() const { return look_->runs; }
  int change_runs() const { return change_->runs; }

  Transcript transcript;
  std::vector<std::string> log;
  std::string streamed;
  std::function<std::optional<tools::ToolOutcome>(const llm::ToolCall&)> authorize;

 private:
  std::shared_ptr<tools::ToolRegistry> tools_;
  CountingTool* look_ = nullptr;
  CountingTool* change_ = nullptr;
  std::atomic<bool> compact_next_{false};
};

class TurnTest : public ::testing::Test {
 protected:
  v1::TurnOutcome Run(int max_steps = 10, size_t max_calls = Turn::kMaxCallsPerReply) {
    return Turn(&host_, &model_, &cancelled_, max_steps, max_calls).Run(&error_);
  }
  std::shared_ptr<FakeScript> script_ = std::make_shared<FakeScript>();
  FakeModelClient model_{script_};
  std::atomic<bool> cancelled_{false};
  FakeHost host_;
  std::string error_;
};

TEST_F(TurnTest, ABatchOfCallsIsAnsweredInCallOrderThenTheModelIsAskedAgain) {
  script_->Add(
      CallsReply({{"look", "{\"n\":1}"}, {"look", "{\"n\":2}"}, {"look", "{\"n\":3}"}}, "c"));
  script_->Add(TextReply("done"));
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_DONE);
  EXPECT_EQ(host_.look_runs(), 3);
  // One batch of concurrent calls: one AppendResults (one save) for the three.
  EXPECT_THAT(host_.log, ElementsAre("request", "reply:3", "ready:c0", "ready:c1", "ready:c2",
                                     "results:3", "request", "reply:0"));
  const Json& m = host_.transcript.messages();
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m[3]["tool_call_id"], "c0");
  EXPECT_EQ(m[5]["tool_call_id"], "c2");
  EXPECT_THAT(host_.transcript.Validate(), ::testing::IsEmpty());
}

TEST_F(TurnTest, ADeniedCallGetsExactlyOneResultAndItsToolNeverRuns) {
  host_.authorize = [](const llm::ToolCall&) -> std::optional<tools::ToolOutcome> {
    return tools::ToolOutcome{"denied by a rule", true, true};
  };
  script_->Add(CallsReply({{"change", "{}"}}, "g"));
  script_->Add(TextReply("ok"));
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_DONE);
  EXPECT_EQ(host_.change_runs(), 0);
  EXPECT_EQ(host_.transcript.messages()[3]["content"], "denied by a rule");
  EXPECT_THAT(host_.transcript.Validate(), ::testing::IsEmpty());
}

TEST_F(TurnTest, AnApprovalTheHostRoutesUpIsWaitedForThenTheCallRuns) {
  // A child session's gated call: its host asks the parent's clients and waits for their answer
  // (here another thread), and the loop runs the call once it comes.
  agent::Mutex mu;
  agent::CondVar cv;
  bool answered = false;
  host_.authorize = [&](const llm::ToolCall&) -> std::optional<tools::ToolOutcome> {
    std::thread parent([&] {
      agent::MutexLock l(&mu);
      answered = true;
      cv.SignalAll();
    });
    {
      agent::MutexLock l(&mu);
      while (!answered) cv.WaitWithTimeout(&mu, absl::Seconds(10));
    }
    parent.join();
    return std::nullopt;  // allowed
  };
  script_->Add(CallsReply({{"change", "{}"}}, "g"));
  script_->Add(TextReply("ok"));
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_DONE);
  EXPECT_EQ(host_.change_runs(), 1);
  EXPECT_THAT(host_.log, ::testing::Contains("ask:g0"));
}

TEST_F(TurnTest, ACancelMidStreamEndsTheTurnAndKeepsWhatWasShown) {
  script_->SetHold(true);
  std::thread canceller([&] {
    ASSERT_TRUE(script_->WaitHolding(absl::Seconds(10)));
    host_.OnText("partial ");  // what reached the clients before the cancel
    cancelled_ = true;
  });
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_CANCELLED);
  canceller.join();
  EXPECT_THAT(host_.log, ElementsAre("request", "keep:partial "));
  EXPECT_EQ(host_.transcript.messages().back()["content"], "partial ");
  EXPECT_THAT(host_.transcript.Validate(), ::testing::IsEmpty());
}

TEST_F(TurnTest, AFailedRequestEndsTheTurnWithTheServersWords) {
  script_->Add(absl::UnavailableError("gave up after 5 attempts: 503 overloaded"));
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_ERROR);
  EXPECT_THAT(error_, HasSubstr("503 overloaded"));
}

TEST_F(TurnTest, CompactionIsDoneBeforeTheRequestThatNeedsIt) {
  host_.CompactBeforeNextRequest();
  script_->Add(TextReply("fine"));
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_DONE);
  EXPECT_THAT(host_.log, ElementsAre("compact", "request", "reply:0"));
}

TEST_F(TurnTest, CallsPastTheCapAreAnsweredWithoutRunning) {
  script_->Add(CallsReply(
      {{"look", "{}"}, {"look", "{}"}, {"look", "{}"}, {"look", "{}"}, {"look", "{}"}}, "c"));
  script_->Add(TextReply("ok"));
  EXPECT_EQ(Run(10, /*max_calls=*/2), v1::TURN_OUTCOME_DONE);
  EXPECT_EQ(host_.look_runs(), 2);
  const Json& m = host_.transcript.messages();
  EXPECT_THAT(m[6]["content"].get<std::string>(), HasSubstr("at most 2 tool calls"));
  EXPECT_THAT(m[7]["content"].get<std::string>(), HasSubstr("at most 2 tool calls"));
  EXPECT_THAT(host_.transcript.Validate(), ::testing::IsEmpty());
}

TEST_F(TurnTest, TheStepLimitEndsATurnThatKeepsCallingTools) {
  for (int i = 0; i < 5; ++i) script_->Add(CallsReply({{"look", "{}"}}, absl::StrCat("s", i)));
  EXPECT_EQ(Run(/*max_steps=*/3), v1::TURN_OUTCOME_MAX_STEPS);
  EXPECT_EQ(host_.look_runs(), 3);
  EXPECT_THAT(host_.transcript.Validate(), ::testing::IsEmpty());
}

TEST_F(TurnTest, AMalformedReplyEndsTheTurnAndLeavesTheTranscriptAsItWas) {
  llm::ModelReply dup = CallsReply({{"look", "{}"}, {"look", "{}"}}, "same");
  dup.tool_calls[1].id = dup.tool_calls[0].id;  // two calls with one id
  script_->Add(dup);
  EXPECT_EQ(Run(), v1::TURN_OUTCOME_ERROR);
  EXPECT_EQ(host_.look_runs(), 0);
  EXPECT_EQ(host_.transcript.size(), 2u);
}

}  // namespace
}  // namespace agent::daemon
