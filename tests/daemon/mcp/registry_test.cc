#include "daemon/mcp/registry.h"

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "absl/time/clock.h"
#include "daemon/mcp/approvals.h"
#include "daemon/mcp/managed_server.h"
#include "daemon/mcp/mcp_tool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/mcp/fake_server.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::HasSubstr;

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

Backoff Fast() { return {absl::Milliseconds(50), absl::Milliseconds(200)}; }

// Waits (bounded) until the server is in `state`.
bool AwaitState(ManagedServer& s, const std::string& state) {
  for (int i = 0; i < 200; ++i) {
    if (s.snapshot().state == state) return true;
    absl::SleepFor(absl::Milliseconds(25));
  }
  return false;
}

class ManagedServerTest : public ::testing::Test {
 protected:
  agent::testing::TempDir dir_;
  std::string log_ = dir_.Join("received.jsonl");
};

TEST_F(ManagedServerTest, StartsListsAndAnswersCalls) {
  ManagedServer s(FakeServerDef("ok", log_), MakeTransport, Fast());
  EXPECT_EQ(s.snapshot().state, "stopped");
  s.Want();
  s.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  ManagedServer::Snapshot snap = s.snapshot();
  EXPECT_EQ(snap.state, "running");
  EXPECT_EQ(snap.tools.size(), 9u);
  absl::StatusOr<Json> r = s.Call("echo", {{"text", "hi"}}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["content"][0]["text"], "echo: hi");
}

TEST_F(ManagedServerTest, ACrashedServerIsRestartedWithItsTools) {
  ManagedServer s(FakeServerDef("ok", log_), MakeTransport, Fast());
  s.Want();
  s.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  EXPECT_FALSE(s.Call("die", Json::object(), {}).ok());
  bool answered = false;
  for (int i = 0; i < 200 && !answered; ++i) {
    answered = s.Call("echo", {{"text", "again"}}, {}).ok();
    if (!answered) absl::SleepFor(absl::Milliseconds(25));
  }
  EXPECT_TRUE(answered);
  EXPECT_EQ(s.snapshot().tools.size(), 9u);
}

TEST_F(ManagedServerTest, WhileACrashedServerWaitsToRestartItsToolsStayAndAnswerWhy) {
  ManagedServer s(FakeServerDef("ok", log_), MakeTransport, {absl::Seconds(30), absl::Seconds(30)});
  s.Want();
  s.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  EXPECT_FALSE(s.Call("die", Json::object(), {}).ok());
  ASSERT_TRUE(AwaitState(s, "failed"));
  EXPECT_EQ(s.snapshot().tools.size(), 9u);
  EXPECT_THAT(s.snapshot().last_error, HasSubstr("status 3"));
  absl::StatusOr<Json> r = s.Call("echo", {{"text", "x"}}, {});
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("not running"));
}

TEST_F(ManagedServerTest, AFailedStartIsRetriedWithBackoff) {
  ManagedServer s(FakeServerDef("crash-once", log_), MakeTransport, Fast());
  s.Want();
  s.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  EXPECT_EQ(s.snapshot().state, "failed");
  EXPECT_THAT(s.snapshot().last_error, HasSubstr("status 7"));
  // A call meanwhile answers at once with the reason.
  absl::StatusOr<Json> r = s.Call("echo", {{"text", "x"}}, {});
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("not running"));
  ASSERT_TRUE(AwaitState(s, "running"));
}

TEST_F(ManagedServerTest, AServerThatNeverInitializesFailsWithinItsStartupTimeout) {
  ServerDef def = FakeServerDef("no-init", log_);
  def.startup_timeout_ms = 300;
  ManagedServer s(def, MakeTransport, {absl::Seconds(30), absl::Seconds(30)});
  const absl::Time start = absl::Now();
  s.Want();
  s.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  EXPECT_EQ(s.snapshot().state, "failed");
  EXPECT_THAT(s.snapshot().last_error, HasSubstr("initialize"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  s.Stop();  // does not wait for the backoff
  EXPECT_LT(absl::Now() - start, absl::Seconds(6));
}

TEST_F(ManagedServerTest, ToolsListChangedUpdatesTheTools) {
  ManagedServer s(FakeServerDef("ok", log_), MakeTransport, Fast());
  s.Want();
  s.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  ASSERT_TRUE(s.Call("change", Json::object(), {}).ok());
  bool added = false;
  for (int i = 0; i < 200 && !added; ++i) {
    for (const ToolInfo& t : s.snapshot().tools) added = added || t.name == "added";
    if (!added) absl::SleepFor(absl::Milliseconds(25));
  }
  EXPECT_TRUE(added);
}

TEST_F(ManagedServerTest, McpToolCapsHugeResultsAndTurnsFailuresIntoOneOutcome) {
  auto s = std::make_shared<ManagedServer>(FakeServerDef("ok", log_), MakeTransport, Fast());
  s->Want();
  s->AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  tools::ToolContext ctx;
  McpTool huge(s, ToolInfo{"huge", "", Json::object(), false}, "mcp__fake__huge");
  tools::ToolOutcome o = huge.Run({{"bytes", 5 << 20}}, ctx);
  EXPECT_FALSE(o.is_error);
  EXPECT_LT(o.content.size(), 40000u);
  EXPECT_THAT(o.content, HasSubstr("bytes omitted"));

  McpTool fail(s, ToolInfo{"fail", "", Json::object(), false}, "mcp__fake__fail");
  o = fail.Run(Json::object(), ctx);
  EXPECT_TRUE(o.is_error);
  EXPECT_EQ(o.content, "it went wrong");

  std::atomic<bool> cancelled{false};
  std::vector<std::string> output;
  ctx.cancelled = &cancelled;
  ctx.on_output = [&](std::string_view chunk, bool) {
    output.emplace_back(chunk);
    cancelled = true;
  };
  McpTool slow(s, ToolInfo{"slow", "", Json::object(), true}, "mcp__fake__slow");
  EXPECT_TRUE(slow.Gated());
  EXPECT_TRUE(slow.Concurrent());
  o = slow.Run(Json::object(), ctx);
  EXPECT_TRUE(o.is_error);
  EXPECT_THAT(o.content, HasSubstr("Cancelled"));
  ASSERT_FALSE(output.empty());
  EXPECT_EQ(output[0], "progress 1/10: step 1\n");

  McpTool die(s, ToolInfo{"die", "", Json::object(), false}, "mcp__fake__die");
  ctx = {};
  o = die.Run(Json::object(), ctx);
  EXPECT_TRUE(o.is_error);
  EXPECT_THAT(o.content, HasSubstr("not available"));
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Set("XDG_CONFIG_HOME", dir_.Join("config"));
    env_.Set("XDG_STATE_HOME", dir_.Join("state"));
    std::filesystem::create_directories(project_);
  }
  std::string FakeDef(const std::string& mode) {
    return Json({{"command", "/usr/bin/python3"},
                 {"args", {FakeServerScript(), mode, dir_.Join("received.jsonl")}},
                 {"startup_timeout_ms", 5000}})
        .dump();
  }
  agent::testing::TempDir dir_;
  agent::testing::ScopedEnv env_;
  std::string project_ = dir_.Join("project");
};

TEST_F(RegistryTest, SessionsGetTheToolsOfUserServersAndApprovedProjectServers) {
  Write(dir_.Join("config/agent/config.json"),
        R"({"mcp_servers": {"fake": )" + FakeDef("ok") + "}}");
  Write(project_ + "/.agent/settings.json", R"({"mcp_servers": {"repo": )" + FakeDef("ok") + "}}");
  Registry registry({});
  std::vector<std::string> reports;
  auto report = [&](const std::string& m) { reports.push_back(m); };
  auto tools = registry.ToolsFor(project_, "s1", nullptr, report);
  EXPECT_NE(tools->Find("mcp__fake__echo"), nullptr);
  EXPECT_TRUE(tools->IsReadOnly("mcp__fake__echo"));
  EXPECT_EQ(tools->Find("mcp__repo__echo"), nullptr);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_THAT(reports[0], HasSubstr("needs a person's approval"));
  // Reported once per session.
  registry.ToolsFor(project_, "s1", nullptr, report);
  EXPECT_EQ(reports.size(), 1u);

  std::vector<agent::v1::McpServer> list = registry.List(project_);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].state(), "running");
  EXPECT_EQ(list[0].tools_size(), 9);
  EXPECT_EQ(list[1].state(), "needs approval");

  EXPECT_TRUE(absl::IsFailedPrecondition(
      registry.Approve(project_, "repo", "something else", list[1].definition())));
  EXPECT_TRUE(
      absl::IsNotFound(registry.Approve(project_, "fake", list[0].target(), list[0].definition())));
  ASSERT_TRUE(registry.Approve(project_, "repo", list[1].target(), list[1].definition()).ok());
  tools = registry.ToolsFor(project_, "s1", nullptr, report);
  EXPECT_NE(tools->Find("mcp__repo__echo"), nullptr);
  // Same definition, one process: the user server is shared by another project's session.
  auto other = registry.ToolsFor(dir_.path(), "s2", nullptr, report);
  EXPECT_NE(other->Find("mcp__fake__echo"), nullptr);
  int started = 0;
  for (const Json& m : ReceivedMessages(dir_.Join("received.jsonl")))
    started += m.contains("started");
  EXPECT_EQ(started, 2);  // "fake" once, "repo" once
}

TEST_F(RegistryTest, AnApprovalCoversExactlyTheDefinitionThePersonWasShown) {
  Write(project_ + "/.agent/settings.json", R"({"mcp_servers": {"repo": )" + FakeDef("ok") + "}}");
  Registry registry({});
  std::vector<agent::v1::McpServer> shown = registry.List(project_);
  ASSERT_EQ(shown.size(), 1u);
  Json definition = Json::parse(shown[0].definition());
  EXPECT_EQ(definition["command"], "/usr/bin/python3");
  EXPECT_EQ(definition["env"], Json::object());
  // The repository changes what is not on the command line after the person looked.
  Json edited = Json::parse(FakeDef("ok"));
  edited["env"] = {{"LD_PRELOAD", "/tmp/evil.so"}};
  Write(project_ + "/.agent/settings.json", R"({"mcp_servers": {"repo": )" + edited.dump() + "}}");
  ASSERT_EQ(registry.List(project_)[0].target(), shown[0].target());
  absl::Status s = registry.Approve(project_, "repo", shown[0].target(), shown[0].definition());
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::IsInvalidArgument(registry.Approve(project_, "repo", shown[0].target(), "")));
  EXPECT_EQ(registry.List(project_)[0].state(), "needs approval");
}

TEST_F(RegistryTest, AReportedProblemCarriesNoControlCharacters) {
  Json def = Json::parse(FakeDef("ok"));
  def["args"].push_back(
      "\x1b]0;title\x07\xc2\x9b"
      "2J");
  Write(project_ + "/.agent/settings.json", R"({"mcp_servers": {"repo": )" + def.dump() + "}}");
  Registry registry({});
  std::vector<std::string> reports;
  registry.ToolsFor(project_, "s1", nullptr, [&](const std::string& m) { reports.push_back(m); });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_THAT(reports[0], HasSubstr("\\x1b]0;title\\x07\\u009b2J"));
  EXPECT_EQ(reports[0].find('\x1b'), std::string::npos);
}

TEST_F(RegistryTest, AnEditedOrRemovedDefinitionStopsTheOldServer) {
  Write(dir_.Join("config/agent/config.json"),
        R"({"mcp_servers": {"fake": )" + FakeDef("ok") + "}}");
  Registry registry({});
  ASSERT_NE(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__fake__echo"), nullptr);
  std::vector<Json> received = ReceivedMessages(dir_.Join("received.jsonl"));
  ASSERT_FALSE(received.empty());
  const int first_pid = static_cast<int>(GetInt(received[0], "pid"));
  ASSERT_EQ(::kill(first_pid, 0), 0);
  Json edited = Json::parse(FakeDef("ok"));
  edited["env"] = {{"EDITED", "1"}};
  Write(dir_.Join("config/agent/config.json"),
        R"({"mcp_servers": {"fake": )" + edited.dump() + "}}");
  ASSERT_NE(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__fake__echo"), nullptr);
  EXPECT_NE(::kill(first_pid, 0), 0);  // stopped and reaped
  Write(dir_.Join("config/agent/config.json"), "{}");
  EXPECT_EQ(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__fake__echo"), nullptr);
  int started = 0;
  for (const Json& m : ReceivedMessages(dir_.Join("received.jsonl"))) {
    if (m.contains("pid")) {
      ++started;
      EXPECT_NE(::kill(static_cast<int>(GetInt(m, "pid")), 0), 0);
    }
  }
  EXPECT_EQ(started, 2);
}

TEST_F(RegistryTest, AnEditorsServersServeItsSessionOnlyAndEndWithIt) {
  Registry registry({});
  const Json servers = {{"ed", Json::parse(FakeDef("ok"))}};
  ASSERT_TRUE(registry.SetSessionServers(project_, "s1", servers).ok());
  ASSERT_NE(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__ed__echo"), nullptr);
  // Another session of the project does not get them, and asking for its tools (which stops
  // servers whose definition left the configuration) leaves them running.
  EXPECT_EQ(registry.ToolsFor(project_, "s2", nullptr, {})->Find("mcp__ed__echo"), nullptr);
  std::vector<Json> received = ReceivedMessages(dir_.Join("received.jsonl"));
  ASSERT_FALSE(received.empty());
  const int pid = static_cast<int>(GetInt(received[0], "pid"));
  EXPECT_EQ(::kill(pid, 0), 0);
  EXPECT_NE(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__ed__echo"), nullptr);
  // `agent mcp ls` lists the project's servers: not a session's.
  EXPECT_TRUE(registry.List(project_).empty());
  registry.EndSession("s1");
  EXPECT_NE(::kill(pid, 0), 0);  // stopped and reaped
  EXPECT_EQ(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__ed__echo"), nullptr);
}

TEST_F(RegistryTest, AnEditorsInvalidServerIsRefusedAndChangesNothing) {
  Registry registry({});
  ASSERT_TRUE(
      registry.SetSessionServers(project_, "s1", {{"ed", Json::parse(FakeDef("ok"))}}).ok());
  absl::Status s = registry.SetSessionServers(project_, "s1", {{"bad", {{"args", {"x"}}}}});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("bad"));
  EXPECT_NE(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__ed__echo"), nullptr);
  // An empty set removes them.
  ASSERT_TRUE(registry.SetSessionServers(project_, "s1", Json::object()).ok());
  EXPECT_EQ(registry.ToolsFor(project_, "s1", nullptr, {})->Find("mcp__ed__echo"), nullptr);
}

TEST_F(RegistryTest, AFailingServerIsReportedAndItsToolsAreAbsent) {
  Write(dir_.Join("config/agent/config.json"),
        R"({"mcp_servers": {"broken": )" + FakeDef("garbage") + "}}");
  Registry registry({});
  std::vector<std::string> reports;
  auto tools = registry.ToolsFor(project_, "s1", nullptr,
                                 [&](const std::string& m) { reports.push_back(m); });
  EXPECT_EQ(tools->Names().size(), 0u);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_THAT(reports[0], HasSubstr("not JSON-RPC"));
}

}  // namespace
}  // namespace agent::daemon::mcp
