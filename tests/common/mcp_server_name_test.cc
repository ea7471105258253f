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
