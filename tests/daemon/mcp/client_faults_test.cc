// Faults that must end a call at once with one clear error, never at its timeout: malformed
// JSON-RPC replies (stdio and HTTP), and HTTP answers that cannot carry the reply.
#include <vector>

#include "absl/time/clock.h"
#include "daemon/mcp/client.h"
#include "daemon/mcp/http_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/mcp/fake_http_server.h"
#include "tests/daemon/mcp/fake_server.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::HasSubstr;

// Far longer than any of these calls may take: reaching it is the failure.
constexpr absl::Duration kCallTimeout = absl::Seconds(20);
constexpr absl::Duration kAtOnce = absl::Seconds(5);

struct Timed {
  absl::StatusOr<Json> result;
  absl::Duration took;
};

Timed Call(Client& c, const std::string& tool) {
  CallOptions o;
  o.timeout = kCallTimeout;
  const absl::Time start = absl::Now();
  absl::StatusOr<Json> r = c.CallTool(tool, Json::object(), o);
  return {std::move(r), absl::Now() - start};
}

TEST(StdioFaultsTest, AMalformedReplyEndsItsCallAtOnceAndTheServerServesOn) {
  agent::testing::TempDir dir;
  Client c(FakeTransport("ok", dir.Join("log")));
  ASSERT_TRUE(c.Initialize(absl::Seconds(10)).ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"no-result", "neither \"result\" nor \"error\""},
      {"both", "both \"result\" and \"error\""},
      {"string-id", "is not the integer we sent"},
      {"error-not-object", "\"error\" is not an object"}};
  for (const auto& [tool, why] : cases) {
    Timed t = Call(c, tool);
    EXPECT_TRUE(absl::IsDataLoss(t.result.status())) << tool << ": " << t.result.status();
    EXPECT_THAT(std::string(t.result.status().message()), HasSubstr(why)) << tool;
    EXPECT_LT(t.took, kAtOnce) << tool;
  }
  Timed echo = Call(c, "echo");
  ASSERT_TRUE(echo.result.ok()) << echo.result.status();
}

class HttpFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(server_.port(), 0) << "the fake HTTP server did not start";
    HttpOptions o;
    o.url = server_.url();
    o.log_name = "fake-http";
    client_ = std::make_unique<Client>(std::make_unique<HttpTransport>(std::move(o)));
    ASSERT_TRUE(client_->Initialize(absl::Seconds(10)).ok());
  }
  FakeHttpServer server_;
  std::unique_ptr<Client> client_;
};

TEST_F(HttpFaultsTest, JsonAndEventStreamAnswersArrive) {
  Timed t = Call(*client_, "echo");
  ASSERT_TRUE(t.result.ok()) << t.result.status();
  EXPECT_EQ((*t.result)["content"][0]["text"], "ok echo");
  // A priming event (an id and empty data) comes first: it is not an error.
  t = Call(*client_, "sse");
  ASSERT_TRUE(t.result.ok()) << t.result.status();
  EXPECT_EQ((*t.result)["content"][0]["text"], "ok sse");
}

TEST_F(HttpFaultsTest, AnAnswerThatCannotCarryTheReplyEndsTheCallAtOnce) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"html", "content type \"text/html\", neither application/json nor text/event-stream"},
      {"bad-sse", "an event that is not JSON-RPC: {this is not json"},
      {"sse-ends", "event stream ended without the answer"},
      {"no-result", "neither \"result\" nor \"error\""}};
  for (const auto& [tool, why] : cases) {
    Timed t = Call(*client_, tool);
    EXPECT_FALSE(t.result.ok()) << tool;
    EXPECT_THAT(std::string(t.result.status().message()), HasSubstr(why)) << tool;
    EXPECT_LT(t.took, kAtOnce) << tool;
  }
  EXPECT_TRUE(Call(*client_, "echo").result.ok());
}

TEST_F(HttpFaultsTest, TheProtocolVersionHeaderComesOnlyFromInitialize) {
  // The "version" tool's result holds a protocolVersion of its own.
  for (int i = 0; i < 2; ++i) {
    Timed t = Call(*client_, "version");
    ASSERT_TRUE(t.result.ok()) << t.result.status();
    EXPECT_EQ((*t.result)["content"][0]["text"], kProtocolVersions.front()) << "call " << i;
  }
}

}  // namespace
}  // namespace agent::daemon::mcp
