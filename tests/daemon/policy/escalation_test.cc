#include "daemon/policy/escalation.h"

#include <stdlib.h>

#include <filesystem>

#include "daemon/hooks/guard_verdict.h"
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

struct Call {
  Json args;
  CallFacts facts;
};

// A real project: paths are resolved inside it to find the protected ones.
const std::string& Workdir() {
  static const std::string* dir = [] {
    char tmpl[] = "/tmp/escalation_test.XXXXXX";
    std::string d = std::filesystem::canonical(::mkdtemp(tmpl)).string();
    std::filesystem::create_directories(d + "/.agent");
    std::filesystem::create_directories(d + "/src");
    static std::string* made = new std::string(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*made, ec);
    });
    return made;
  }();
  return *dir;
}

Call Make(const std::string& tool, Json args) {
  return {args, GatherCallFacts(Workdir(), tool, args)};
}

CallVerdict Decide(v1::PolicyMode mode, const policy::RuleSet& rules, Call c,
                   bool confines = true) {
  return DecideGatedCall(mode, rules, c.args, confines, &c.facts);
}

Json Escalated(const std::string& command, const std::string& why = "needs the host") {
  return {{"command", command}, {"escalate", true}, {"justification", why}};
}

TEST(EscalationTest, AutoRunsConfinedCommandsAndProjectEdits) {
  auto none = Rules({}, {});
  EXPECT_EQ(Decide(v1::POLICY_MODE_AUTO, none, Make("bash", {{"command", "make"}})).kind, K::kRun);
  // Naming .git is harmless inside the sandbox, where it is read-only.
  EXPECT_EQ(Decide(v1::POLICY_MODE_AUTO, none, Make("bash", {{"command", "cat .git/HEAD"}})).kind,
            K::kRun);
  EXPECT_EQ(Decide(v1::POLICY_MODE_AUTO, none,
                   Make("write_file", {{"path", "src/a.c"}, {"content", "x"}}))
                .kind,
            K::kRun);
}

TEST(EscalationTest, AutoAsksWhatTheSandboxCannotHold) {
  auto none = Rules({}, {});
  // No sandbox here: bash is asked about, never run unasked.
  EXPECT_EQ(Decide(v1::POLICY_MODE_AUTO, none, Make("bash", {{"command", "make"}}), false).kind,
            K::kAsk);
  EXPECT_EQ(Decide(v1::POLICY_MODE_AUTO, none,
                   Make("write_file", {{"path", ".agent/settings.json"}, {"content", "{}"}}))
                .kind,
            K::kAsk);
  EXPECT_EQ(Decide(v1::POLICY_MODE_AUTO, none, Make("mcp__gh__create_issue", Json::object())).kind,
            K::kAsk);
}

TEST(EscalationTest, PlanModeRunsOnlyConfinedCommandsAndRefusesTheRest) {
  auto none = Rules({}, {});
  const v1::PolicyMode plan = v1::POLICY_MODE_PLAN;
  // Confined, where the session binds the project read-only (ToolContext::read_only).
  EXPECT_EQ(Decide(plan, none, Make("bash", {{"command", "grep -r TODO src"}})).kind, K::kRun);
  CallVerdict unconfined = Decide(plan, none, Make("bash", {{"command", "ls"}}), false);
  EXPECT_EQ(unconfined.kind, K::kRefuse);
  EXPECT_THAT(unconfined.refusal, HasSubstr("plan mode"));
  EXPECT_EQ(Decide(plan, none, Make("bash", Escalated("make install"))).kind, K::kRefuse);
  CallVerdict edit =
      Decide(plan, none, Make("write_file", {{"path", "src/a.c"}, {"content", "x"}}));
  EXPECT_EQ(edit.kind, K::kRefuse);
  EXPECT_THAT(edit.refusal, HasSubstr("present_plan"));
  EXPECT_EQ(Decide(plan, none, Make("mcp__gh__create_issue", Json::object())).kind, K::kRefuse);
  // Deny rules still refuse, and an allow rule opens nothing.
  EXPECT_EQ(Decide(plan, Rules({}, {"bash(grep *)"}), Make("bash", {{"command", "grep x"}})).kind,
            K::kRefuse);
  EXPECT_EQ(
      Decide(plan, Rules({"write_file(src/**)"}, {}), Make("write_file", {{"path", "src/a"}})).kind,
      K::kRefuse);
}

TEST(EscalationTest, EditsModeRunsProjectEditsAndAsksForCommands) {
  auto none = Rules({}, {});
  const v1::PolicyMode edits = v1::POLICY_MODE_ACCEPT_EDITS;
  EXPECT_EQ(Decide(edits, none, Make("write_file", {{"path", "src/a.c"}, {"content", "x"}})).kind,
            K::kRun);
  EXPECT_EQ(Decide(edits, none, Make("edit_file", {{"path", "src/a.c"}})).kind, K::kRun);
  // Commands are asked about, sandbox or not: edits mode is not auto mode.
  EXPECT_EQ(Decide(edits, none, Make("bash", {{"command", "make"}})).kind, K::kAsk);
  EXPECT_EQ(Decide(edits, none, Make("bash", {{"command", "make"}}), false).kind, K::kAsk);
  EXPECT_EQ(Decide(edits, none, Make("mcp__gh__create_issue", Json::object())).kind, K::kAsk);
  // What only a person may allow is still asked; deny rules still refuse.
  EXPECT_EQ(Decide(edits, none, Make("write_file", {{"path", ".agent/settings.json"}})).kind,
            K::kAsk);
  EXPECT_EQ(
      Decide(edits, Rules({}, {"write_file(src/**)"}), Make("write_file", {{"path", "src/a.c"}}))
          .kind,
      K::kRefuse);
  // A rule that allows a command still runs it without a question.
  EXPECT_EQ(Decide(edits, Rules({"bash(make *)"}, {}), Make("bash", {{"command", "make"}})).kind,
            K::kRun);
}

TEST(EscalationTest, AHooksAllowNeverEscalatesPastTheSandbox) {
  Call c = Make("bash", Escalated("make install"));
  CallVerdict v = DecideGatedCall(v1::POLICY_MODE_YES, Rules({}, {}), c.args, true, &c.facts);
  ASSERT_TRUE(c.facts.protected_reason.has_value());
  hooks::ToolGuard allow;
  allow.permission = hooks::Permission::kAllow;
  EXPECT_EQ(hooks::ApplyGuard(v, allow, v1::POLICY_MODE_YES, true).kind, K::kAsk);
}

TEST(EscalationTest, AutoKeepsDenyRules) {
  auto v = Decide(v1::POLICY_MODE_AUTO, Rules({}, {"bash(rm *)"}),
                  Make("bash", {{"command", "rm -rf x"}}));
  EXPECT_EQ(v.kind, K::kRefuse);
  EXPECT_THAT(v.refusal, HasSubstr("permission rule"));
}

TEST(EscalationTest, AnEscalationNeedsAPersonInEveryMode) {
  auto allow_all = Rules({"bash"}, {});
  for (v1::PolicyMode mode : {v1::POLICY_MODE_ASK, v1::POLICY_MODE_YES, v1::POLICY_MODE_AUTO}) {
    Call c = Make("bash", Escalated("make install"));
    CallVerdict v = DecideGatedCall(mode, allow_all, c.args, true, &c.facts);
    EXPECT_EQ(v.kind, K::kAsk) << mode;
    ASSERT_TRUE(c.facts.protected_reason.has_value());  // so --yes clients never answer it
    EXPECT_THAT(*c.facts.protected_reason, HasSubstr("outside the sandbox"));
  }
  EXPECT_EQ(Decide(v1::POLICY_MODE_DENY_UNRULED, allow_all, Make("bash", Escalated("make"))).kind,
            K::kRefuse);
  EXPECT_EQ(Decide(v1::POLICY_MODE_READ_ONLY, allow_all, Make("bash", Escalated("make"))).kind,
            K::kRefuse);
}

TEST(EscalationTest, DenyRulesAndAMissingJustificationRefuse) {
  EXPECT_EQ(
      Decide(v1::POLICY_MODE_ASK, Rules({}, {"bash(rm *)"}), Make("bash", Escalated("rm x"))).kind,
      K::kRefuse);
  auto v = Decide(v1::POLICY_MODE_ASK, Rules({}, {}), Make("bash", Escalated("make", " ")));
  EXPECT_EQ(v.kind, K::kRefuse);
  EXPECT_THAT(v.refusal, HasSubstr("justification"));
}

TEST(EscalationTest, AnEscalationRuleAllowsExactlyItsCommand) {
  auto rules = Rules({"bash_escalated(make install)"}, {});
  EXPECT_EQ(
      Decide(v1::POLICY_MODE_DENY_UNRULED, rules, Make("bash", Escalated("make  install"))).kind,
      K::kRun);
  EXPECT_EQ(Decide(v1::POLICY_MODE_ASK, rules, Make("bash", Escalated("make install && id"))).kind,
            K::kAsk);
  // It allows nothing but escalations: the same command confined is decided as before.
  EXPECT_EQ(Decide(v1::POLICY_MODE_ASK, rules, Make("bash", {{"command", "make install"}})).kind,
            K::kAsk);
}

TEST(EscalationTest, AlwaysProposesOnlyTheEscalationRule) {
  Call c = Make("bash", Escalated("make install"));
  EXPECT_EQ(ProposedRules("bash", c.args, c.facts),
            std::vector<std::string>{"bash_escalated(make install)"});
  EXPECT_TRUE(ExactRules("bash", c.args, c.facts).empty());  // no wider or narrower choice
  // A confined command: its prefix rule, and the exact command beside it.
  Call plain = Make("bash", {{"command", "make install"}});
  EXPECT_EQ(ProposedRules("bash", plain.args, plain.facts),
            std::vector<std::string>{"bash(make *)"});
  EXPECT_EQ(ExactRules("bash", plain.args, plain.facts),
            std::vector<std::string>{"bash(make install)"});
  Call odd = Make("bash", Escalated("make\ninstall"));
  EXPECT_TRUE(ProposedRules("bash", odd.args, odd.facts).empty());
}

}  // namespace
}  // namespace agent::daemon
