// SessionState on its own, with the disk in memory and no turn thread of substance: each
// method that changes what is saved has written it when it returns (no lock guard or later
// save does it), the queue and steers follow the turn, and holding turns off refuses as it
// says.
#include "daemon/session/session_state.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;

// What reached the "disk", in order.
struct Disk {
  agent::Mutex mu;
  std::vector<std::string> writes ABSL_GUARDED_BY(mu);
  std::string all() {
    agent::MutexLock l(&mu);
    std::string out;
    for (const std::string& w : writes) out += w;
    return out;
  }
};

class MemoryFiles : public SessionFiles {
 public:
  explicit MemoryFiles(std::shared_ptr<Disk> disk) : disk_(std::move(disk)) {}
  absl::Status WriteTranscript(std::string_view text) override { return Add("whole:", text); }
  absl::Status AppendJournal(std::string_view lines) override { return Add("journal:", lines); }
  absl::Status WriteMeta(const SessionMeta&) override { return Add("meta", ""); }
  absl::Status Delete() override { return Add("deleted", ""); }

 private:
  absl::Status Add(std::string_view what, std::string_view text) {
    agent::MutexLock l(&disk_->mu);
    disk_->writes.push_back(std::string(what) + std::string(text) + "\n");
    return absl::OkStatus();
  }
  std::shared_ptr<Disk> disk_;
};

class SessionStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SessionState::Init init;
    init.workdir = "/nowhere";
    init.meta.id = "0123456789abcdef";
    ASSERT_TRUE(init.transcript.AppendSystem("system").ok());
    init.answered = true;
    init.epoch = "e";
    init.clock = Clock::Real();
    init.config = &config_;
    init.files = std::make_unique<MemoryFiles>(disk_);
    state_ = std::make_unique<SessionState>(std::move(init));
    // The turn thread only says that it ran: a test takes the turn's steps itself.
    state_->SetTurnBody([this] { started_.Notify(); });
    state_->Open(/*is_new=*/false, /*forked=*/false, {}, {}, "",
                 SessionState::FirstWrite::kNothing);
  }
  void TearDown() override {
    state_->StopTurns();
    state_->JoinTurnThread();
  }

  // Takes the queued prompt as the turn thread would.
  void BeginTurn() {
    ASSERT_TRUE(state_->NextPromptText().has_value());
    tools::FileTracker files;
    ASSERT_TRUE(state_->BeginTurn({}, {}, files, [](int, int, const std::string&) {}));
  }

  Config config_;
  std::shared_ptr<Disk> disk_ = std::make_shared<Disk>();
  std::unique_ptr<SessionState> state_;
  absl::Notification started_;
};

TEST_F(SessionStateTest, EveryChangeIsOnDiskWhenItsMethodReturns) {
  ASSERT_TRUE(state_->Enqueue({"hello there", "t", {}, {}}, {}, std::nullopt).ok());
  ASSERT_TRUE(started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  BeginTurn();
  EXPECT_THAT(disk_->all(), HasSubstr("hello there"));
  llm::ModelReply reply;
  reply.content = "a reply worth keeping";
  reply.finish_reason = "stop";
  ASSERT_TRUE(state_->AppendReply(reply).ok());
  EXPECT_THAT(disk_->all(), HasSubstr("journal:"));
  EXPECT_THAT(disk_->all(), HasSubstr("a reply worth keeping"));
  ASSERT_TRUE(state_->SendBackToWork("check the tests"));
  EXPECT_THAT(disk_->all(), HasSubstr("[Stop hook] check the tests"));
  state_->SealTurn(v1::TURN_OUTCOME_DONE);
  EXPECT_THAT(disk_->all(), HasSubstr("whole:"));                // idle: written whole
  EXPECT_FALSE(state_->EndTurn(v1::TURN_OUTCOME_DONE, "", {}));  // nothing queued: the thread ends
  EXPECT_FALSE(state_->unsaved());
}

TEST_F(SessionStateTest, ASteerNeedsARunningTurnAndAnUntakenOneIsTheNextPrompt) {
  absl::StatusOr<bool> steered = state_->Steer({"use v2", "t", {}, {}});
  ASSERT_TRUE(steered.ok());
  EXPECT_FALSE(*steered);  // no turn: the caller sends it as a prompt
  ASSERT_TRUE(state_->Enqueue({"migrate", "t", {}, {}}, {}, std::nullopt).ok());
  ASSERT_TRUE(started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  BeginTurn();
  steered = state_->Steer({"use v2", "t", {}, {}});
  ASSERT_TRUE(steered.ok());
  EXPECT_TRUE(*steered);
  state_->SealTurn(v1::TURN_OUTCOME_DONE);
  // The turn ended before its next step: the steer is the next prompt, and the thread goes on.
  EXPECT_TRUE(state_->EndTurn(v1::TURN_OUTCOME_DONE, "", {}));
  EXPECT_EQ(state_->NextPromptText(), "use v2");
}

TEST_F(SessionStateTest, HeldTurnsRefuseWithWhatTheCallerWasDoing) {
  ASSERT_TRUE(state_->HoldTurns(std::nullopt, "compact").ok());
  absl::Status again = state_->HoldTurns("t", "restore");
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.message(), HasSubstr("restore the files when it is done"));
  // A prompt sent meanwhile waits for the hold to end, then starts the turn thread.
  ASSERT_TRUE(state_->Enqueue({"after", "t", {}, {}}, {}, std::nullopt).ok());
  EXPECT_FALSE(started_.HasBeenNotified());
  state_->ReleaseTurns("[a note for the model]", "");
  EXPECT_TRUE(started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_THAT(disk_->all(), HasSubstr("[a note for the model]"));
}

TEST_F(SessionStateTest, ACancelBetweenTurnsIsForTheTurnAboutToStart) {
  ASSERT_TRUE(state_->Enqueue({"go", "t", {}, {}}, {}, std::nullopt).ok());
  ASSERT_TRUE(started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::StatusOr<bool> cancelled = state_->Cancel("t");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_TRUE(*cancelled);
  BeginTurn();
  EXPECT_TRUE(state_->cancelled()->load());
}

}  // namespace
}  // namespace agent::daemon
