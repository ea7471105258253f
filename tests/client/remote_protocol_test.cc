// The agent-proxy request and reply lines (proxy_protocol.h) and remote Tab completion.
#include <string>

#include "client/input/remote_completion.h"
#include "client/link/proxy_protocol.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::ElementsAre;

TEST(ProxyProtocolTest, RequestRoundTrips) {
  std::string line = EncodeProxyRequest({false, "/srv/it's \"here\""});
  EXPECT_EQ(line.rfind("agent-proxy1 {", 0), 0u);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto r = DecodeProxyRequest(line);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->autostart);
  EXPECT_EQ(r->dir, "/srv/it's \"here\"");
}

TEST(ProxyProtocolTest, ReplyRoundTripsWithTheEnvironment) {
  ProxyReply reply;
  reply.project = {"/srv/p", "/srv/p/src"};
  reply.home = "/home/me";
  reply.hostname = "box";
  reply.tool_env.add_variables("PATH=/usr/bin");
  reply.tool_env.add_variables("WEIRD=a\nb");
  reply.tool_env.add_keep("MY_*");
  auto r = DecodeProxyReply(EncodeProxyReply(reply));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->status.ok());
  EXPECT_EQ(r->project.root, "/srv/p");
  EXPECT_EQ(r->project.cwd, "/srv/p/src");
  EXPECT_EQ(r->home, "/home/me");
  EXPECT_THAT(r->tool_env.variables(), ElementsAre("PATH=/usr/bin", "WEIRD=a\nb"));
  EXPECT_THAT(r->tool_env.keep(), ElementsAre("MY_*"));
}

TEST(ProxyProtocolTest, AnErrorKeepsItsCode) {
  ProxyReply reply;
  reply.status = absl::PermissionDeniedError("socket dir owned by someone else");
  auto r = DecodeProxyReply(EncodeProxyReply(reply));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(r->status));
  EXPECT_EQ(r->status.message(), "socket dir owned by someone else");
}

TEST(ProxyProtocolTest, RefusesOtherLines) {
  EXPECT_FALSE(DecodeProxyReply("Welcome to box!\n").ok());
  EXPECT_FALSE(DecodeProxyReply("agent-proxy1 [1,2]\n").ok());
  EXPECT_FALSE(DecodeProxyReply("agent-proxy1 {\"root\":\"relative\"}\n").ok());
  EXPECT_FALSE(DecodeProxyRequest("agent-proxy1 {nope\n").ok());
  EXPECT_FALSE(DecodeProxyRequest(std::string(kProxyMagic) + std::string(kMaxProxyLine, ' ')).ok());
}

TEST(RemoteCompleteTest, CommandNamesOnlyNeverLocalFiles) {
  int file_lists = 0;
  CompletionSources s;
  s.custom_commands = [] { return std::vector<CommandCandidate>{{"deploy", "ship it"}}; };
  s.project_files = [&] {
    ++file_lists;
    return std::vector<std::string>{"secret.txt"};
  };
  s.cwd = "/";
  EXPECT_EQ(RemoteComplete("/depl", s).insert, "/deploy ");
  EXPECT_TRUE(RemoteComplete("look at @sec", s).choices.empty());
  EXPECT_EQ(RemoteComplete("look at @sec", s).insert, "");
  EXPECT_EQ(RemoteComplete("/model et", s).insert, "");  // a local path argument
  EXPECT_EQ(file_lists, 0);
}

}  // namespace
}  // namespace agent::client
