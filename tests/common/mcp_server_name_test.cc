#include "common/mcp_server_name.h"

#include <string>

#include "gtest/gtest.h"

namespace agent {
namespace {

TEST(McpServerNameTest, NamesThatFitTheToolNameScheme) {
  EXPECT_TRUE(ValidMcpServerName("github"));
  EXPECT_TRUE(ValidMcpServerName("my-db_2"));
  EXPECT_TRUE(ValidMcpServerName(std::string(32, 'a')));
  EXPECT_FALSE(ValidMcpServerName(""));
  EXPECT_FALSE(ValidMcpServerName("a__b"));
  EXPECT_FALSE(ValidMcpServerName("a b"));
  EXPECT_FALSE(ValidMcpServerName("é"));
  EXPECT_FALSE(ValidMcpServerName(std::string(33, 'a')));
  EXPECT_FALSE(ValidMcpServerName("gh_"));  // mcp__gh___x would read as server "gh"
  EXPECT_TRUE(ValidMcpServerName("gh-"));
}

TEST(McpServerNameTest, NamesAPersonWouldConfuseShareAKey) {
  EXPECT_EQ(McpServerNameKey("GH"), "gh");
  EXPECT_EQ(McpServerNameKey("gh-"), "gh");
  EXPECT_EQ(McpServerNameKey("Gh_-"), "gh");
  EXPECT_NE(McpServerNameKey("ghx"), "gh");
}

TEST(McpServerNameTest, OnlyHttpAndHttpsUrls) {
  EXPECT_TRUE(ValidMcpServerUrl("http://127.0.0.1:9/mcp"));
  EXPECT_TRUE(ValidMcpServerUrl("https://mcp.example.com/mcp"));
  EXPECT_FALSE(ValidMcpServerUrl("https://"));
  EXPECT_FALSE(ValidMcpServerUrl("ftp://example.com/"));
  EXPECT_FALSE(ValidMcpServerUrl("file:///etc/passwd"));
  EXPECT_FALSE(ValidMcpServerUrl("example.com/mcp"));
}

}  // namespace
}  // namespace agent
