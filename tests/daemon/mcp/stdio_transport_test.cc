#include "daemon/mcp/stdio_transport.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/process_table.h"
#include "daemon/mcp/client.h"
#include "daemon/mcp/command_path.h"
#include "daemon/mcp/http_transport.h"
#include "daemon/mcp/managed_server.h"
#include "daemon/mcp/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/mcp/fake_server.h"
#include "tests/fakes/fake_process_runner.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::HasSubstr;

// An executable shell script at `path` that leaves `marker` behind when it runs.
void WriteMarkerScript(const std::string& path, const std::string& marker) {
  std::ofstream(path) << "#!/bin/sh\necho ran > '" << marker << "'\nexit 1\n";
  ::chmod(path.c_str(), 0755);
}

// The live processes whose command line holds `marker`.
std::vector<pid_t> LiveProcessesNaming(const std::string& marker) {
  std::vector<pid_t> out;
  for (const ProcessEntry& p : ReadProcessTable()) {
    if (p.state == 'Z' || p.state == 'X') continue;
    std::ifstream f("/proc/" + std::to_string(p.pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) out.push_back(p.pid);
  }
  return out;
}

// Waits (bounded) until no live process names `marker`; kills what is left either way.
bool AllGone(const std::string& marker) {
  for (int i = 0; i < 200; ++i) {
    if (LiveProcessesNaming(marker).empty()) return true;
    absl::SleepFor(absl::Milliseconds(10));  // a killed process takes a moment to be reaped
  }
  for (pid_t p : LiveProcessesNaming(marker)) ::kill(p, SIGKILL);
  return false;
}

class CommandPathTest : public ::testing::Test {
 protected:
  agent::testing::TempDir dir_;
};

TEST_F(CommandPathTest, ABareNameIsFoundOnAnAbsoluteEntry) {
  WriteMarkerScript(dir_.Join("tool"), dir_.Join("marker"));
  absl::StatusOr<std::string> p = FindCommand("tool", "/nonexistent:" + dir_.path());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, dir_.Join("tool"));
}

TEST_F(CommandPathTest, RelativeAndEmptyEntriesAreNeverSearched) {
  WriteMarkerScript(dir_.Join("tool"), dir_.Join("marker"));
  std::filesystem::create_directories(dir_.Join("bin"));
  WriteMarkerScript(dir_.Join("bin/tool"), dir_.Join("marker"));
  const std::filesystem::path was = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  absl::StatusOr<std::string> p = FindCommand("tool", ":.:bin::");
  std::filesystem::current_path(was);
  EXPECT_TRUE(absl::IsNotFound(p.status())) << p.status();
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("command not found: tool"));
}

TEST_F(CommandPathTest, ANameWithASlashIsUsedAsWritten) {
  EXPECT_EQ(*FindCommand("./server.sh", "/usr/bin"), "./server.sh");
  EXPECT_EQ(*FindCommand("/usr/bin/python3", ""), "/usr/bin/python3");
}

class StdioTransportTest : public ::testing::Test {
 protected:
  // A server definition in `dir_` (its cwd) whose command is the bare name of a script there.
  StdioOptions RepositoryShippedCommand(const std::string& env_path) {
    WriteMarkerScript(dir_.Join("agentd-test-server"), marker_);
    StdioOptions o;
    o.command = "agentd-test-server";
    o.env = {"PATH=" + env_path, "LANG=C.UTF-8"};
    o.cwd = dir_.path();
    o.log_name = "repo";
    return o;
  }
  agent::testing::TempDir dir_;
  std::string marker_ = dir_.Join("ran");
};

TEST_F(StdioTransportTest, ABareNameNotOnTheDaemonsPathNeverRunsTheFileInTheCwd) {
  StdioTransport t(RepositoryShippedCommand("/nonexistent"));
  absl::Status s = t.Start({[](Json) {}, [](absl::Status) {}});
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("command not found"));
  t.Close();
  EXPECT_FALSE(std::filesystem::exists(marker_));
}

TEST_F(StdioTransportTest, TheDefinitionsOwnPathIsNotSearched) {
  StdioTransport t(RepositoryShippedCommand(dir_.path()));
  absl::Status s = t.Start({[](Json) {}, [](absl::Status) {}});
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  t.Close();
  EXPECT_FALSE(std::filesystem::exists(marker_));
}

TEST_F(StdioTransportTest, AServerWhoseCommandIsNotFoundFailsWithTheReason) {
  ServerDef d;
  d.name = "gone";
  d.scope = "user";
  d.command = "agentd-test-no-such-command";
  d.cwd = dir_.path();
  ManagedServer server(d, MakeTransport, {absl::Seconds(60), absl::Seconds(60)});
  server.Want();
  server.AwaitSettled(absl::Now() + absl::Seconds(10), nullptr);
  ManagedServer::Snapshot snap = server.snapshot();
  EXPECT_EQ(snap.state, "failed");
  EXPECT_THAT(snap.last_error, HasSubstr("command not found: agentd-test-no-such-command"));
}

TEST_F(StdioTransportTest, TheServerStartsThroughTheProcessSeamInsideItsWrapper) {
  agent::testing::FakeProcessRunner runner;
  // A stand-in server that answers one line and stays until its stdin closes.
  runner.start = [](const ProcessSpec& asked) {
    return agent::testing::FakeProcessRunner::StandIn(
        asked, {"/bin/sh", "-c", "echo '{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}'; cat"});
  };
  StdioOptions o;
  o.command = "/bin/cat";
  o.args = {"--flag"};
  o.cwd = dir_.path();
  o.env = {"ONLY=this"};
  o.wrapper = {"/usr/bin/bwrap", "--die-with-parent"};
  o.runner = &runner;
  StdioTransport t(o);
  std::promise<std::string> said;
  std::future<std::string> first = said.get_future();
  ASSERT_TRUE(
      t.Start({[&](Json m) { said.set_value(m.value("method", "")); }, [](absl::Status) {}}).ok());
  ASSERT_EQ(first.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(first.get(), "hello");
  t.Close();
  ASSERT_EQ(runner.starts().size(), 1u);
  const ProcessSpec asked = runner.starts()[0];
  EXPECT_EQ(asked.program, "/usr/bin/bwrap");
  EXPECT_EQ(asked.argv, (std::vector<std::string>{"/usr/bin/bwrap", "--die-with-parent", "--",
                                                  "/bin/cat", "--flag"}));
  EXPECT_EQ(asked.env, std::vector<std::string>{"ONLY=this"});
  EXPECT_EQ(asked.cwd, dir_.path());
  EXPECT_FALSE(asked.stdin_null);  // the server's requests go on its stdin
}

TEST_F(StdioTransportTest, ACloseBeforeStartRunsNothing) {
  WriteMarkerScript(dir_.Join("server"), marker_);
  StdioOptions o;
  o.command = dir_.Join("server");
  o.cwd = dir_.path();
  StdioTransport t(o);
  t.Close();  // a server stopped before its start got going
  absl::Status s = t.Start({[](Json) {}, [](absl::Status) {}});
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  t.Close();
  EXPECT_FALSE(std::filesystem::exists(marker_));
}

// A server that starts a helper in a session of its own (setsid), which holds its stdout. Once
// running, the helper sends {"method": "helper/ready", "params": {"pid": <its pid>}}: the only
// sign that it has left the group (the marker is in the server's own command line too, and in
// none while the helper's exec is under way).
StdioOptions ServerWithAnOrphan(const std::string& cwd, const std::string& marker,
                                const std::string& then) {
  StdioOptions o;
  o.command = "/bin/sh";
  // One process that sleeps with the marker in its argv: nothing is left when it is killed.
  o.args = {"-c",
            "setsid /usr/bin/python3 -c 'import json, os, time; "
            "print(json.dumps({\"jsonrpc\": \"2.0\", \"method\": \"helper/ready\", "
            "\"params\": {\"pid\": os.getpid()}}), flush=True); time.sleep(30)' '" +
                marker + "' & " + then};
  o.cwd = cwd;
  o.log_name = "orphan";
  return o;
}

TEST_F(StdioTransportTest, AServerThatExitsIsNoticedWhileAHelperHoldsItsOutput) {
  const std::string marker = dir_.Join("helper-exits");
  StdioTransport t(ServerWithAnOrphan(dir_.path(), marker, "exit 3"));
  // A promise of the text, not an absl::Notification and a shared Status: Debian's Abseil is
  // not built for TSan, which then cannot see the hand-over.
  std::promise<std::string> closed;
  std::future<std::string> why = closed.get_future();
  ASSERT_TRUE(
      t.Start({[](Json) {}, [&](absl::Status s) { closed.set_value(std::string(s.message())); }})
          .ok());
  // Without the exit being watched, the end came only when the helper's 30 s were over.
  ASSERT_EQ(why.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_THAT(why.get(), HasSubstr("the server exited with status 3"));
  t.Close();
  AllGone(marker);  // re-parented before the server was gone: not ours to end here
}

TEST_F(StdioTransportTest, CloseEndsAHelperThatLeftTheServersGroup) {
  const std::string marker = dir_.Join("helper-close");
  StdioTransport t(ServerWithAnOrphan(dir_.path(), marker, "exec sleep 30"));
  std::promise<pid_t> ready;  // a promise, for TSan: see above
  std::future<pid_t> helper = ready.get_future();
  ASSERT_TRUE(t.Start({[&](Json m) {
                         if (m.value("method", "") == "helper/ready") {
                           ready.set_value(m["params"]["pid"].get<pid_t>());
                         }
                       },
                       [](absl::Status) {}})
                  .ok());
  // Closed before the helper left the group, the test would only see the group killed.
  ASSERT_EQ(helper.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const pid_t pid = helper.get();
  ASSERT_EQ(::getsid(pid), pid);  // a session of its own: out of reach of the group kill
  t.Close();
  EXPECT_TRUE(AllGone(marker));
}

TEST(HttpTransportTest, ACloseBeforeStartIsHarmless) {
  HttpOptions o;
  o.url = "http://127.0.0.1:9/mcp";
  HttpTransport t(o);
  t.Close();
  bool closed = false;
  absl::Status s = t.Start({[](Json) {}, [&](absl::Status) { closed = true; }});
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  EXPECT_FALSE(closed);
}

// A server stopped while it starts: every round ends (no reader left polling closed pipes,
// no start after the close), whichever of the two wins.
TEST_F(StdioTransportTest, ACloseRacingInitializeAlwaysEnds) {
  for (int round = 0; round < 20; ++round) {
    Client c(FakeTransport("ok", dir_.Join("log")));
    std::thread closer([&c, round] {
      absl::SleepFor(absl::Microseconds(round * 200));  // spreads the close over the start
      c.Close();
    });
    (void)c.Initialize(absl::Seconds(10));
    closer.join();
    EXPECT_FALSE(c.closed().ok());
  }
}

}  // namespace
}  // namespace agent::daemon::mcp
