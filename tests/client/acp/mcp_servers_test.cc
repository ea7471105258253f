#include "client/acp/mcp_servers.h"

#include <string>

#include "gtest/gtest.h"

namespace agent::client::acp {
namespace {

std::string Refusal(const Json& servers) {
  absl::StatusOr<Json> out = EditorMcpServers(Json{{"mcpServers", servers}});
  return out.ok() ? "accepted" : std::string(out.status().message());
}

TEST(EditorMcpServersTest, StdioAndHttpServersTakeTheConfigShape) {
  absl::StatusOr<Json> out = EditorMcpServers(Json::parse(R"({"mcpServers": [
    {"name": "files", "command": "/usr/bin/mcp-files", "args": ["--root", "."],
     "env": [{"name": "LEVEL", "value": "2"}]},
    {"type": "http", "name": "docs", "url": "http://127.0.0.1:9/mcp",
     "headers": [{"name": "Authorization", "value": "Bearer t"}]}]})"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Json::parse(R"({
    "files": {"command": "/usr/bin/mcp-files", "args": ["--root", "."], "env": {"LEVEL": "2"}},
    "docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}}})"));
}

TEST(EditorMcpServersTest, NoneIsAnEmptyObject) {
  EXPECT_EQ(*EditorMcpServers(Json::object()), Json::object());
  EXPECT_EQ(*EditorMcpServers(Json{{"mcpServers", nullptr}}), Json::object());
  EXPECT_EQ(*EditorMcpServers(Json{{"mcpServers", Json::array()}}), Json::object());
}

TEST(EditorMcpServersTest, WhatCannotBeAServerIsRefusedNamingTheEntry) {
  EXPECT_EQ(Refusal("x"), "mcpServers must be a list");
  EXPECT_EQ(Refusal(Json::array({7})), "mcpServers[0] is not an object");
  EXPECT_EQ(Refusal(Json::array({Json{{"command", "a"}}})), "mcpServers[0] has no name");
  EXPECT_EQ(Refusal(Json::array(
                {Json{{"name", "a"}, {"command", "a"}}, Json{{"name", "a"}, {"command", "b"}}})),
            "mcpServers[1]: the name \"a\" is given twice");
  EXPECT_NE(Refusal(Json::array({Json{{"type", "sse"}, {"name", "a"}, {"url", "u"}}}))
                .find("type \"sse\" is not supported"),
            std::string::npos);
  EXPECT_EQ(Refusal(Json::array({Json{{"name", "a"}, {"command", "a"}, {"env", {{"K", "V"}}}}})),
            "mcpServers[0].env must be a list");
}

}  // namespace
}  // namespace agent::client::acp
