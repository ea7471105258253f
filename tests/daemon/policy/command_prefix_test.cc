#include "daemon/policy/command_prefix.h"

#include "daemon/policy/rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

TEST(CommandPrefixTest, KeepsTheCommandUpToItsFirstVaryingArgument) {
  EXPECT_THAT(CommandPrefix("git status -s"), Optional(std::string("git status")));
  EXPECT_THAT(CommandPrefix("git status"), Optional(std::string("git status")));
  EXPECT_THAT(CommandPrefix("make test"), Optional(std::string("make")));
  EXPECT_THAT(CommandPrefix("npm run test -- --watch"), Optional(std::string("npm run test")));
  EXPECT_THAT(CommandPrefix("cargo build --release"), Optional(std::string("cargo build")));
  EXPECT_THAT(CommandPrefix("ls -la src"), Optional(std::string("ls")));
  EXPECT_THAT(CommandPrefix("./gradlew check"), Optional(std::string("./gradlew")));
}

TEST(CommandPrefixTest, NoPrefixAsStrongAsAShell) {
  for (const char* c :
       {"bash -c 'echo hi'", "sh -c ls", "python3 -c 'print(1)'", "python3.11 x.py", "node x.js",
        "env FOO=1 make", "xargs rm", "sudo make install", "find . -name x", "sed -i s/a/b/ f",
        "awk '{print}' f", "npx prettier --write .", "timeout 5 make", "perl -e 1"}) {
    EXPECT_EQ(CommandPrefix(c), std::nullopt) << c;
  }
}

TEST(CommandPrefixTest, NoPrefixForWritesDeletesOrTheNetwork) {
  for (const char* c : {"rm -rf build", "mv a b", "cp a b", "chmod +x f", "tee out", "dd if=a",
                        "curl https://x", "ssh host ls", "kill 1"}) {
    EXPECT_EQ(CommandPrefix(c), std::nullopt) << c;
  }
}

TEST(CommandPrefixTest, SubcommandsThatRunArbitraryCodeStayExact) {
  for (const char* c :
       {"git rebase -x 'rm -rf /' main", "git config core.pager evil", "git -c alias.x=!sh x",
        "git -C /tmp status", "git", "npm exec foo", "npm run", "npm run -s test",
        "docker run --privileged img", "go run /tmp/x.go", "uv run python", "kubectl exec p"}) {
    EXPECT_EQ(CommandPrefix(c), std::nullopt) << c;
  }
}

TEST(CommandPrefixTest, WordsThatAreNotPlainGiveNoPrefix) {
  for (const char* c :
       {"FOO=1 make", "$CMD run", "\"git\" status", "g* status", "git \"$x\"", "-rf x"}) {
    EXPECT_EQ(CommandPrefix(c), std::nullopt) << c;
  }
}

TEST(ProposePrefixRulesTest, EachPartGetsItsPrefixOrItsExactRule) {
  Json args = {{"command", "git status -s && rm -rf tmp && make test"}};
  EXPECT_THAT(ProposePrefixRules("bash", args),
              ElementsAre("bash(git status *)", "bash(rm -rf tmp)", "bash(make *)"));
  EXPECT_THAT(ProposeRules("bash", args),
              ElementsAre("bash(git status -s)", "bash(rm -rf tmp)", "bash(make test)"));
}

TEST(ProposePrefixRulesTest, TheProposedPrefixRuleAllowsTheNextSimilarCallOnly) {
  Json first = {{"command", "git status -s"}};
  RuleSet rules;
  for (const std::string& r : ProposePrefixRules("bash", first)) {
    auto rule = ParseRule(r);
    ASSERT_TRUE(rule.ok()) << rule.status();
    rules.allow.push_back(*rule);
  }
  EXPECT_EQ(Evaluate(rules, "bash", {{"command", "git status --porcelain"}}), Verdict::kAllow);
  EXPECT_EQ(Evaluate(rules, "bash", {{"command", "git status"}}), Verdict::kAllow);
  EXPECT_EQ(Evaluate(rules, "bash", {{"command", "git status-x"}}), Verdict::kAsk);
  EXPECT_EQ(Evaluate(rules, "bash", {{"command", "git status; rm -rf /"}}), Verdict::kAsk);
  EXPECT_EQ(Evaluate(rules, "bash", {{"command", "git push"}}), Verdict::kAsk);
}

TEST(ProposePrefixRulesTest, AnMcpToolProposesEveryToolOfItsServer) {
  EXPECT_EQ(ProposePrefixRules("mcp__gh__create_issue", Json::object()),
            std::vector<std::string>{"mcp__gh__*"});
  EXPECT_EQ(ProposeRules("mcp__gh__create_issue", Json::object()),
            std::vector<std::string>{"mcp__gh__create_issue"});
}

TEST(ProposePrefixRulesTest, ARedirectionOutOfTheProjectKeepsTheExactRule) {
  // `bash(git status *)` would not allow this very command (a redirection is a write).
  EXPECT_EQ(ProposePrefixRules("bash", {{"command", "git status -s > /tmp/out.txt"}}),
            ProposeRules("bash", {{"command", "git status -s > /tmp/out.txt"}}));
  EXPECT_EQ(ProposePrefixRules("bash", {{"command", "git status -s > out.txt"}}),
            std::vector<std::string>{"bash(git status *)"});
}

TEST(ProposePrefixRulesTest, OtherToolsAreUnchanged) {
  Json args = {{"path", "src/a.cc"}};
  EXPECT_EQ(ProposePrefixRules("edit_file", args), ProposeRules("edit_file", args));
}

}  // namespace
}  // namespace agent::daemon::policy
