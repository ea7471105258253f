// Threads per session: a running turn has one thread of its own (the turn thread, while the
// model answers), an idle session none, however many sessions there are.
#include <dirent.h>

#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "daemon/session/opening.h"
#include "daemon/session/session.h"
#include "gtest/gtest.h"
#include "tests/fakes/event_recorder.h"
#include "tests/fakes/fake_model_client.h"

namespace agent::daemon {
namespace {

using ::agent::testing::EventRecorder;
using ::agent::testing::FakeModelClient;
using ::agent::testing::FakeScript;
using ::agent::testing::TextReply;

int ThreadCount() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

// Polls (bounded) until the thread count is `n`: a thread that returned leaves /proc a moment
// later, and there is no event for that.
int WaitThreadCount(int n) {
  int now = ThreadCount();
  for (int i = 0; i < 500 && now != n; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    now = ThreadCount();
  }
  return now;
}

class SessionThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/session-threads-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    workdir_ = std::filesystem::canonical(tmpl).string();
    registry_ = tools::ToolRegistry::CreateCore();
    script_ = std::make_shared<FakeScript>();
  }
  void TearDown() override {
    for (auto& s : sessions_) s->Shutdown("test over");
    sessions_.clear();
    std::filesystem::remove_all(workdir_);
  }

  std::shared_ptr<Session> NewSession() {
    SessionDeps d;
    d.epoch = "test-epoch";
    d.tools = &registry_;
    auto script = script_;
    d.make_model_client = [script] { return std::make_unique<FakeModelClient>(script); };
    SessionSettings s;
    s.model.model = "fake";
    s.policy = agent::v1::POLICY_MODE_YES;
    auto created = CreateSession(workdir_, s, "", d);
    EXPECT_TRUE(created.ok()) << created.status();
    sessions_.push_back(*created);
    return *created;
  }

  bool WaitRequests(size_t n) {
    agent::MutexLock l(&script_->mu);
    for (int i = 0; i < 1000 && script_->requests.size() < n; ++i) {
      script_->cv.WaitWithTimeout(&script_->mu, absl::Milliseconds(10));
    }
    return script_->requests.size() >= n;
  }

  std::string workdir_;
  tools::ToolRegistry registry_;
  std::shared_ptr<FakeScript> script_;
  std::vector<std::shared_ptr<Session>> sessions_;
};

TEST_F(SessionThreadsTest, OneThreadPerRunningTurnAndNoneWhenIdle) {
  constexpr int kSessions = 8;
  std::vector<std::unique_ptr<EventRecorder>> clients;
  for (int i = 0; i < kSessions; ++i) {
    clients.push_back(std::make_unique<EventRecorder>());
    NewSession()->Attach(clients.back().get(), "t", false, "", 0);
    script_->Add(TextReply("done"));
  }
  // A sanitizer's runtime starts its own background thread with the first thread created:
  // let that happen before counting.
  const int before = ThreadCount();
  std::thread([] {}).join();
  const int idle = WaitThreadCount(before);  // `before`, or one more under TSan
  ASSERT_GT(idle, 0);

  script_->SetHold(true);  // every turn waits in its model request
  for (auto& s : sessions_) ASSERT_TRUE(s->SendPrompt("go", "t").ok());
  ASSERT_TRUE(WaitRequests(kSessions));
  EXPECT_EQ(ThreadCount(), idle + kSessions);

  script_->SetHold(false);
  for (auto& c : clients) ASSERT_NE(c->WaitTurnEnded(), nullptr);
  EXPECT_EQ(WaitThreadCount(idle), idle);

  // A second turn starts a thread again and leaves none behind either.
  script_->Add(TextReply("again"));
  ASSERT_TRUE(sessions_[0]->SendPrompt("again", "t").ok());
  ASSERT_NE(clients[0]->WaitTurnEnded(2), nullptr);
  EXPECT_EQ(WaitThreadCount(idle), idle);
  for (auto& s : sessions_) s->Detach(clients[&s - &sessions_[0]].get());
}

}  // namespace
}  // namespace agent::daemon
