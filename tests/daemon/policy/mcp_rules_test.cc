// Rules for MCP tools: `mcp__<server>__<tool>` and `mcp__<server>__*`.
#include "daemon/policy/rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;

RuleSet Rules(std::vector<std::string> allow, std::vector<std::string> deny) {
  RuleSet r;
  for (const std::string& a : allow) r.allow.push_back(*ParseRule(a));
  for (const std::string& d : deny) r.deny.push_back(*ParseRule(d));
  return r;
}

TEST(McpRulesTest, AServerWildcardParsesAndCoversOnlyThatServer) {
  ASSERT_TRUE(ParseRule("mcp__github__*").ok());
  EXPECT_FALSE(ParseRule("bash*").ok());   // a wildcard only for MCP servers
  EXPECT_FALSE(ParseRule("mcp__*").ok());  // not every server at once
  const RuleSet r = Rules({"mcp__github__*"}, {});
  EXPECT_EQ(Evaluate(r, "mcp__github__create_issue", Json::object()), Verdict::kAllow);
  EXPECT_EQ(Evaluate(r, "mcp__githubx__create_issue", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(r, "mcp__gitlab__create_issue", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(r, "bash", Json{{"command", "ls"}}), Verdict::kAsk);
}

TEST(McpRulesTest, DenyWinsOverTheWildcardAndTheToolRule) {
  const RuleSet r = Rules({"mcp__github__*"}, {"mcp__github__delete_repo"});
  EXPECT_EQ(Evaluate(r, "mcp__github__delete_repo", Json::object()), Verdict::kDeny);
  EXPECT_EQ(Evaluate(r, "mcp__github__list_issues", Json::object()), Verdict::kAllow);
  const RuleSet all_denied = Rules({"mcp__github__list_issues"}, {"mcp__github__*"});
  EXPECT_EQ(Evaluate(all_denied, "mcp__github__list_issues", Json::object()), Verdict::kDeny);
}

TEST(McpRulesTest, ExactRuleAndWildcardStayDistinctWhenMerged) {
  RuleSet into = Rules({"mcp__a__*"}, {});
  MergeRules(Rules({"mcp__a__x"}, {}), &into);
  EXPECT_EQ(into.allow.size(), 2u);
}

TEST(McpRulesTest, AllowAlwaysProposesTheToolItself) {
  EXPECT_THAT(ProposeRules("mcp__fs__read_file", Json{{"path", "a.txt"}}),
              ElementsAre("mcp__fs__read_file"));
}

TEST(McpRulesTest, ARuleNamesOneServerExactlyNotByPrefixOrCase) {
  // A user's mcp__gh__* allowed the tools of project servers named `gh_` and `GH`.
  const RuleSet r = Rules({"mcp__gh__*", "mcp__db__query"}, {});
  EXPECT_EQ(Evaluate(r, "mcp__gh__create_issue", Json::object()), Verdict::kAllow);
  // A server `gh_` cannot exist (names may not end in `_`: mcp_server_name_test), so
  // `mcp__gh___x` is gh's own tool `_x`; a longer name is another server.
  EXPECT_EQ(Evaluate(r, "mcp__ghx__create_issue", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(r, "mcp__GH__create_issue", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(r, "mcp__gh-x__create_issue", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(r, "mcp__db__query", Json::object()), Verdict::kAllow);
  EXPECT_EQ(Evaluate(r, "mcp__DB__query", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(r, "mcp__db__QUERY", Json::object()), Verdict::kAsk);
  // A deny rule is as exact, and built-in tools still match in any case.
  const RuleSet d = Rules({"Bash"}, {"mcp__gh__*"});
  EXPECT_EQ(Evaluate(d, "mcp__gh__x", Json::object()), Verdict::kDeny);
  EXPECT_EQ(Evaluate(d, "bash", Json{{"command", "ls"}}), Verdict::kAllow);
}

}  // namespace
}  // namespace agent::daemon::policy
