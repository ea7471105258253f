#include "daemon/mcp/client.h"

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/mcp/fake_server.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::HasSubstr;

class ClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<Client> Connect(const std::string& mode) {
    auto c = std::make_unique<Client>(FakeTransport(mode, log_));
    EXPECT_TRUE(c->Initialize(absl::Seconds(10)).ok());
    return c;
  }
  bool Received(const std::string& method) {
    for (const Json& m : ReceivedMessages(log_)) {
      if (GetString(m, "method") == method) return true;
    }
    return false;
  }
  agent::testing::TempDir dir_;
  std::string log_ = dir_.Join("received.jsonl");
};

TEST_F(ClientTest, InitializesListsEveryPageAndCalls) {
  auto c = Connect("ok");
  EXPECT_EQ(c->protocol_version(), kProtocolVersions.front());
  absl::StatusOr<std::vector<ToolInfo>> tools = c->ListTools(absl::Seconds(10));
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->size(), 9u);  // two pages
  EXPECT_EQ((*tools)[0].name, "echo");
  EXPECT_TRUE((*tools)[0].read_only);
  EXPECT_FALSE((*tools)[1].read_only);
  absl::StatusOr<Json> r = c->CallTool("add", {{"a", 2}, {"b", 3}}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["content"][0]["text"], "5");
  EXPECT_TRUE(Received("notifications/initialized"));
}

TEST_F(ClientTest, AnUnknownToolIsAnErrorAnswerNotAHang) {
  auto c = Connect("ok");
  absl::StatusOr<Json> r = c->CallTool("nope", Json::object(), {});
  EXPECT_TRUE(absl::IsUnknown(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("no tool nope"));
}

TEST_F(ClientTest, AServerThatNeverAnswersInitializeTimesOut) {
  Client c(FakeTransport("no-init", log_));
  const absl::Time start = absl::Now();
  absl::Status s = c.Initialize(absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_FALSE(c.closed().ok());
}

TEST_F(ClientTest, AnUnknownProtocolVersionIsRefused) {
  Client c(FakeTransport("bad-version", log_));
  absl::Status s = c.Initialize(absl::Seconds(10));
  EXPECT_THAT(std::string(s.message()), HasSubstr("1999-01-01"));
}

TEST_F(ClientTest, GarbageOnStdoutEndsTheConnection) {
  auto c = std::make_unique<Client>(FakeTransport("garbage", log_));
  // The garbage line comes right after initialize's answer: initialize may still see it
  // succeed, but nothing after it does.
  (void)c->Initialize(absl::Seconds(10));
  absl::StatusOr<std::vector<ToolInfo>> tools = c->ListTools(absl::Seconds(10));
  EXPECT_FALSE(tools.ok());
  EXPECT_THAT(std::string(tools.status().message()), HasSubstr("not JSON-RPC"));
}

TEST_F(ClientTest, AServerThatDiesMidCallAnswersTheCallWithTheReason) {
  auto c = Connect("ok");
  const absl::Time start = absl::Now();
  absl::StatusOr<Json> r = c->CallTool("die", Json::object(), {});
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("status 3"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  // Later calls fail at once too.
  EXPECT_FALSE(c->CallTool("echo", {{"text", "x"}}, {}).ok());
}

TEST_F(ClientTest, CancelSendsCancelledAndReturnsAtOnce) {
  auto c = Connect("ok");
  std::atomic<bool> cancelled{false};
  std::atomic<int> progress{0};
  CallOptions o;
  o.cancelled = &cancelled;
  o.on_progress = [&](const Json& p) {
    if (p.value("progress", 0) >= 1) cancelled = true;  // cancel after the first step
    ++progress;
  };
  absl::StatusOr<Json> r = c->CallTool("slow", Json::object(), o);
  EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
  EXPECT_GE(progress.load(), 1);
  // The server hears about it (bounded wait for the fake's log).
  for (int i = 0; i < 100 && !Received("notifications/cancelled"); ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(Received("notifications/cancelled"));
  // The connection stays usable.
  EXPECT_TRUE(c->CallTool("echo", {{"text", "after"}}, {}).ok());
}

TEST_F(ClientTest, ACallWithoutAnswerTimesOut) {
  auto c = Connect("ok");
  CallOptions o;
  o.timeout = absl::Milliseconds(300);
  absl::StatusOr<Json> r = c->CallTool("slow", Json::object(), o);
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
}

TEST_F(ClientTest, AHugeResultArrives) {
  auto c = Connect("ok");
  absl::StatusOr<Json> r = c->CallTool("huge", {{"bytes", 6 << 20}}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["content"][0]["text"].get<std::string>().size(), size_t{6} << 20);
}

TEST_F(ClientTest, AResultOverTheLimitEndsTheConnection) {
  auto c = Connect("ok");
  absl::StatusOr<Json> r = c->CallTool("huge", {{"bytes", 40 << 20}}, {});
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
}

TEST_F(ClientTest, ANotificationFloodNeitherBlocksNorFloodsProgress) {
  auto c = Connect("ok");
  int progress = 0;
  CallOptions o;
  o.on_progress = [&](const Json&) { ++progress; };
  absl::StatusOr<Json> r = c->CallTool("flood", {{"count", 50000}}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["content"][0]["text"], "flooded");
  EXPECT_LE(progress, 500);
}

TEST_F(ClientTest, ToolsListChangedIsReported) {
  // Declared before the client: its close (at the end of the scope) calls on_change too.
  std::atomic<int> changes{0};
  auto c = std::make_unique<Client>(FakeTransport("ok", log_));
  c->set_on_change([&] { ++changes; });
  ASSERT_TRUE(c->Initialize(absl::Seconds(10)).ok());
  ASSERT_TRUE(c->CallTool("change", Json::object(), {}).ok());
  EXPECT_EQ(changes.load(), 1);
  EXPECT_TRUE(c->tools_changed());
  absl::StatusOr<std::vector<ToolInfo>> tools = c->ListTools(absl::Seconds(10));
  ASSERT_TRUE(tools.ok());
  EXPECT_EQ(tools->back().name, "added");
}

}  // namespace
}  // namespace agent::daemon::mcp
