#include "client/text/mcp_definition_text.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::ElementsAre;

TEST(DefinitionLinesTest, TheApprovalPromptShowsEverythingTheApprovalCovers) {
  const std::string def = R"({"name":"repo","scope":"project","project":"/src/p",
    "command":"python3","args":["-m","srv","two words"],"cwd":"",
    "env":{"LD_PRELOAD":"/tmp/evil.so","X":"a\u001b]0;pwned\u0007"},"url":"","headers":{}})";
  EXPECT_THAT(DefinitionLines(def, true),
              ElementsAre("command: python3 -m srv 'two words'", "cwd: /src/p (the project)",
                          "env: LD_PRELOAD=/tmp/evil.so", "env: X=a\\x1b]0;pwned\\x07"));
  // `agent mcp ls` leaves out what the definition does not set.
  EXPECT_THAT(DefinitionLines(def, false),
              ElementsAre("command: python3 -m srv 'two words'", "env: LD_PRELOAD=/tmp/evil.so",
                          "env: X=a\\x1b]0;pwned\\x07"));
}

TEST(DefinitionLinesTest, ANewlineInAWordCannotFakeAnotherLine) {
  const std::string def = R"({"scope":"project","project":"/p","command":"srv",
    "args":["ok\nenv: NOTHING=here"],"cwd":"sub","env":{}})";
  EXPECT_THAT(DefinitionLines(def, true),
              ElementsAre("command: srv 'ok\\nenv: NOTHING=here'", "cwd: /p/sub", "env: (none)"));
}

TEST(DefinitionLinesTest, AnHttpServerShowsItsUrlAndHeaders) {
  const std::string def = R"({"scope":"project","project":"/p","command":"",
    "url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer t"}})";
  EXPECT_THAT(DefinitionLines(def, true),
              ElementsAre("url: https://mcp.example.com/mcp", "header: Authorization: Bearer t"));
  EXPECT_THAT(DefinitionLines(R"({"url":"http://h/"})", true),
              ElementsAre("url: http://h/", "header: (none)"));
}

TEST(DefinitionLinesTest, AListingHidesValuesThatLookLikeCredentials) {
  const std::string http = R"({"scope":"user","url":"https://h/mcp",
    "headers":{"Authorization":"Bearer t0k","X-Api-Key":"k3y","Accept-Language":"en"}})";
  EXPECT_THAT(DefinitionLines(http, false),
              ElementsAre("url: https://h/mcp", "header: Accept-Language: en",
                          "header: Authorization: (hidden)", "header: X-Api-Key: (hidden)"));
  const std::string stdio = R"({"scope":"user","command":"srv",
    "env":{"GITHUB_TOKEN":"ghp_x","DEBUG":"1"}})";
  EXPECT_THAT(DefinitionLines(stdio, false),
              ElementsAre("command: srv", "env: DEBUG=1", "env: GITHUB_TOKEN=(hidden)"));
  EXPECT_THAT(DefinitionLines(stdio, true), ::testing::Contains("env: GITHUB_TOKEN=ghp_x"));
}

TEST(DefinitionLinesTest, NoDefinitionSaysSo) {
  EXPECT_THAT(DefinitionLines("", true), ElementsAre("(the daemon sent no definition)"));
}

}  // namespace
}  // namespace agent::client
