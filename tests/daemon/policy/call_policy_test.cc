#include "daemon/policy/call_policy.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using K = CallVerdict::Kind;
using ::testing::HasSubstr;

policy::RuleSet Rules(std::vector<std::string> allow, std::vector<std::string> deny) {
  policy::RuleSet r;
  for (auto& a : allow) r.allow.push_back(*policy::ParseRule(a));
  for (auto& d : deny) r.deny.push_back(*policy::ParseRule(d));
  return r;
}

CallFacts Bash(std::string command) {
  return GatherCallFacts("/nonexistent", "bash", {{"command", std::move(command)}});
}

TEST(CallPolicyTest, ModesAndRules) {
  auto none = Rules({}, {});
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_ASK, none, Bash("make")).kind, K::kAsk);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, none, Bash("make")).kind, K::kRun);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_READ_ONLY, Rules({"bash"}, {}), Bash("make")).kind,
            K::kRefuse);
  auto unruled = DecideCall(v1::POLICY_MODE_DENY_UNRULED, none, Bash("make"));
  EXPECT_EQ(unruled.kind, K::kRefuse);
  EXPECT_THAT(unruled.refusal, HasSubstr("--yes"));
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_DENY_UNRULED, Rules({"bash(make)"}, {}), Bash("make")).kind,
            K::kRun);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_ASK, Rules({"bash"}, {"bash(make)"}), Bash("make")).kind,
            K::kRefuse);
}

TEST(CallPolicyTest, DenyWinsOverYes) {
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, Rules({}, {"bash(rm *)"}), Bash("rm -rf x")).kind,
            K::kRefuse);
}

TEST(CallPolicyTest, RulesThatDoNotParseRefuseEveryGatedCall) {
  absl::StatusOr<policy::RuleSet> broken =
      absl::FailedPreconditionError("/c/config.json:3:5: not a rule");
  for (v1::PolicyMode mode :
       {v1::POLICY_MODE_ASK, v1::POLICY_MODE_YES, v1::POLICY_MODE_DENY_UNRULED}) {
    CallVerdict v = DecideCall(mode, broken, Bash("ls"));
    EXPECT_EQ(v.kind, K::kRefuse);
    EXPECT_THAT(v.refusal, HasSubstr("config.json:3:5"));
  }
}

TEST(CallPolicyTest, ProtectedBashCommandsNeedAPerson) {
  auto all = Rules({"bash"}, {});
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, all, Bash("echo x > .agent/settings.json")).kind,
            K::kRefuse);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_DENY_UNRULED, all, Bash("cd .git && vi config")).kind,
            K::kRefuse);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_ASK, all, Bash("cat sub/.GIT/hooks/x")).kind, K::kAsk);
  for (const char* fine : {"git status", "cat .gitignore", "ls .github/", "make agent"}) {
    EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, all, Bash(fine)).kind, K::kRun) << fine;
  }
}

class CallPolicyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/call-policy-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    workdir_ = std::filesystem::canonical(tmpl).string();
    std::filesystem::create_directories(workdir_ + "/.agent");
    std::filesystem::create_directories(workdir_ + "/docs");
    std::filesystem::create_symlink("../.agent/settings.json", workdir_ + "/docs/notes.md");
  }
  void TearDown() override { std::filesystem::remove_all(workdir_); }
  CallFacts Edit(const std::string& path) {
    return GatherCallFacts(workdir_, "edit_file", {{"path", path}});
  }
  std::string workdir_;
};

TEST_F(CallPolicyFiles, PathRulesMatchTheResolvedPath) {
  CallFacts f = Edit("docs/notes.md");
  EXPECT_EQ(f.rule_args["path"], ".agent/settings.json");
  EXPECT_EQ(f.written_args["path"], "docs/notes.md");
  ASSERT_TRUE(f.protected_reason.has_value());
  EXPECT_THAT(*f.protected_reason, HasSubstr(".agent/settings.json"));
  auto rules = Rules({"edit_file"}, {"edit_file(.agent/**)"});
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, rules, f).kind, K::kRefuse);
  // The written path is matched by deny rules too.
  auto deny_docs = Rules({"edit_file"}, {"edit_file(docs/**)"});
  EXPECT_THAT(DecideCall(v1::POLICY_MODE_ASK, deny_docs, f).refusal, HasSubstr("permission rule"));
}

TEST_F(CallPolicyFiles, AProtectedPathIsAskedInAskModeAndRefusedOtherwise) {
  auto allow = Rules({"edit_file"}, {});
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_ASK, allow, Edit(".agent/x")).kind, K::kAsk);
  CallVerdict yes = DecideCall(v1::POLICY_MODE_YES, allow, Edit(workdir_ + "/.git/config"));
  EXPECT_EQ(yes.kind, K::kRefuse);
  EXPECT_THAT(yes.refusal, HasSubstr("Only the user can allow this"));
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_DENY_UNRULED, allow, Edit("a/.git/hooks/pre-push")).kind,
            K::kRefuse);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, allow, Edit("src/main.cc")).kind, K::kRun);
}

TEST_F(CallPolicyFiles, TheAgentsOwnConfigAndStateInsideTheProjectAreProtected) {
  // As when the project is the home directory: a write rule must not reach the trusted rules.
  const char* old_config = std::getenv("XDG_CONFIG_HOME");
  const char* old_state = std::getenv("XDG_STATE_HOME");
  const std::string saved_config = old_config ? old_config : "";
  const std::string saved_state = old_state ? old_state : "";
  setenv("XDG_CONFIG_HOME", (workdir_ + "/.config").c_str(), 1);
  setenv("XDG_STATE_HOME", (workdir_ + "/.local/state").c_str(), 1);
  auto allow = Rules({"edit_file", "bash"}, {});
  for (const char* path : {".config/agent/config.json", ".local/state/agent/trusted-rules.json",
                           ".local/state/agent/mcp-approvals.json"}) {
    CallFacts f = Edit(path);
    ASSERT_TRUE(f.protected_reason.has_value()) << path;
    EXPECT_THAT(*f.protected_reason, HasSubstr("the agent's own configuration or state"));
    EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, allow, f).kind, K::kRefuse) << path;
  }
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, allow, Edit(".config/other/x")).kind, K::kRun);
  EXPECT_EQ(DecideCall(v1::POLICY_MODE_YES, allow,
                       Bash("echo '{}' > ~/.local/state/agent/trusted-rules.json"))
                .kind,
            K::kRefuse);
  EXPECT_EQ(
      DecideCall(v1::POLICY_MODE_YES, allow, Bash("cat " + workdir_ + "/.config/agent/x")).kind,
      K::kRefuse);
  auto restore = [](const char* name, const char* was, const std::string& value) {
    if (was != nullptr) {
      setenv(name, value.c_str(), 1);
    } else {
      unsetenv(name);
    }
  };
  restore("XDG_CONFIG_HOME", old_config, saved_config);
  restore("XDG_STATE_HOME", old_state, saved_state);
}

TEST(CallPolicyTest, RuleArgumentsAreRelativeToTheWorkdir) {
  Json args = {{"path", "/w/src/a.cc"}, {"content", "x"}};
  EXPECT_EQ(RuleArguments("/w", args)["path"], "src/a.cc");
  EXPECT_EQ(RuleArguments("/w", {{"path", "/other/a.cc"}})["path"], "/other/a.cc");
}

}  // namespace
}  // namespace agent::daemon
