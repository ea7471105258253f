#include "client/link/remote_target.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

auto Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ValidateHostTest, AcceptsHostsAndUsers) {
  for (const char* h :
       {"box", "me@box.example.org", "build-01", "u_1@10.0.0.7", "::1", "me@fe80::1"}) {
    EXPECT_TRUE(ValidateHost(h).ok()) << h;
  }
}

TEST(ValidateHostTest, RefusesWhatSshOrAShellWouldReadAsMore) {
  for (const char* h : {"", "-oProxyCommand=touch /tmp/x", "box;rm -rf ~", "box cmd", "me@-box",
                        "@box", "box'", "box\n", "a$(id)", "me:x@box", "box`id`"}) {
    EXPECT_FALSE(ValidateHost(h).ok()) << h;
  }
  EXPECT_FALSE(ValidateHost(std::string(256, 'a')).ok());
}

TEST(ValidateRemoteBinTest, RefusesOptionsAndControlCharacters) {
  EXPECT_TRUE(ValidateRemoteBin("/opt/agent dir/bin/agent").ok());
  EXPECT_TRUE(ValidateRemoteBin("~/bin/agent").ok());
  EXPECT_FALSE(ValidateRemoteBin("").ok());
  EXPECT_FALSE(ValidateRemoteBin("-agent").ok());
  EXPECT_FALSE(ValidateRemoteBin("agent\nrm -rf ~").ok());
}

TEST(ParseRemoteArgsTest, TakesTheFlagsOutAnywhereBeforeDoubleDash) {
  auto r = ParseRemoteArgs({"ls", "--host", "me@box", "--cd=/srv/p", "-l", "--remote-bin",
                            "/opt/agent", "--", "--host", "x"},
                           Env({}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->target.has_value());
  EXPECT_EQ(r->target->host, "me@box");
  EXPECT_EQ(r->target->dir, "/srv/p");
  EXPECT_EQ(r->target->remote_bin, "/opt/agent");
  EXPECT_THAT(r->target->ssh, ElementsAre("ssh"));
  EXPECT_THAT(r->argv, ElementsAre("ls", "-l", "--", "--host", "x"));
}

TEST(ParseRemoteArgsTest, EnvironmentGivesHostDirAndSsh) {
  auto r = ParseRemoteArgs({"hello"}, Env({{"AGENT_HOST", "box"},
                                           {"AGENT_REMOTE_DIR", "work/p"},
                                           {"AGENT_SSH", "ssh  -F /tmp/cfg"}}));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->target.has_value());
  EXPECT_EQ(r->target->host, "box");
  EXPECT_EQ(r->target->dir, "work/p");
  EXPECT_EQ(r->target->remote_bin, "agent");
  EXPECT_THAT(r->target->ssh, ElementsAre("ssh", "-F", "/tmp/cfg"));
  // The flag wins over the variable.
  r = ParseRemoteArgs({"--host=other", "--cd", "x"}, Env({{"AGENT_HOST", "box"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->target->host, "other");
  EXPECT_EQ(r->target->dir, "x");
}

TEST(ParseRemoteArgsTest, LocalWithoutAHost) {
  auto r = ParseRemoteArgs({"ls", "-a"}, Env({{"AGENT_REMOTE_DIR", "x"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->target.has_value());
  EXPECT_THAT(r->argv, ElementsAre("ls", "-a"));
}

TEST(ParseRemoteArgsTest, UsageErrors) {
  EXPECT_THAT(ParseRemoteArgs({"--cd", "/x"}, Env({})).status().message(), HasSubstr("--host"));
  EXPECT_THAT(ParseRemoteArgs({"ls", "--host"}, Env({})).status().message(),
              HasSubstr("needs a value"));
  EXPECT_FALSE(ParseRemoteArgs({"--host", "-oProxyCommand=x"}, Env({})).ok());
  EXPECT_FALSE(ParseRemoteArgs({}, Env({{"AGENT_HOST", "a b"}})).ok());
  EXPECT_FALSE(ParseRemoteArgs({"--host", "box", "--remote-bin", "-x"}, Env({})).ok());
}

TEST(ShellQuoteTest, QuotesEverythingButAHomePrefix) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$(id)`id`;|&"), "'$(id)`id`;|&'");
  EXPECT_EQ(ShellQuote("~/bin/agent"), "~/'bin/agent'");
}

TEST(RemoteCommandLineTest, FixedWordsAndTheQuotedBin) {
  EXPECT_EQ(RemoteCommandLine("agent", {"proxy", "--protocol", "1"}), "'agent' proxy --protocol 1");
  EXPECT_EQ(RemoteCommandLine("/opt/my agent", {"mcp", "rm", "x y"}),
            "'/opt/my agent' mcp rm 'x y'");
  EXPECT_EQ(RemoteCommandIn("/srv/it's", "'agent' mcp ls"),
            "cd -- '/srv/it'\\''s' && 'agent' mcp ls");
  EXPECT_EQ(RemoteCommandIn("", "'agent' mcp ls"), "'agent' mcp ls");
}

TEST(SshArgvTest, HostAfterDoubleDashAndOneRemoteCommand) {
  RemoteTarget t;
  t.host = "me@box";
  t.ssh = {"ssh", "-F", "/tmp/cfg"};
  std::vector<std::string> argv = SshArgv(t, "'agent' proxy --protocol 1", /*batch=*/true);
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(argv[0], "ssh");
  EXPECT_EQ(argv[1], "-F");
  EXPECT_EQ(argv[3], "-T");
  EXPECT_THAT(argv, ::testing::Contains("BatchMode=yes"));
  EXPECT_EQ(argv[argv.size() - 3], "--");
  EXPECT_EQ(argv[argv.size() - 2], "me@box");
  EXPECT_EQ(argv.back(), "'agent' proxy --protocol 1");
  EXPECT_THAT(SshArgv(t, "x", false), ::testing::Not(::testing::Contains("BatchMode=yes")));
  EXPECT_THAT(SshArgv(t, "x", false, /*tty=*/true), ::testing::Contains("-tt"));
}

TEST(SshEnvironmentTest, NoSecretAndNoAgentSettingReachesSsh) {
  std::vector<std::string> env =
      SshEnvironment({"PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "AGENT_API_KEY=sk-1",
                      "OPENAI_API_KEY=sk-2", "AGENT_BASE_URL=http://x", "GITHUB_TOKEN=t",
                      "DB_PASSWORD=p", "TERM=xterm", "AGENT_MODEL=m", "broken"});
  EXPECT_THAT(env, ElementsAre("PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "TERM=xterm"));
}

}  // namespace
}  // namespace agent::client
