// CallGuard against a fake host: no session, no gRPC server. What must hold whatever a hook,
// a rule or the mode says: a deny rule wins, a failed guard never fails open, a protected
// path is a person's decision, and a person's answer is the one that counts.
#include "daemon/session/call_guard.h"

#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "daemon/policy/rule_source.h"
#include "daemon/policy/rules.h"
#include "daemon/tools/tool_registry.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using testing::TempDir;
using testing::WriteFile;

class FakeHost : public CallGuard::Host {
 public:
  explicit FakeHost(std::string workdir) : workdir_(std::move(workdir)) {}

  v1::PolicyMode Mode() override { return mode; }
  void Tell(std::string text, bool error) override {
    (error ? errors : notices).push_back(std::move(text));
  }
  tools::ToolContext MakeToolContext(const std::string& call_id) override {
    tools::ToolContext ctx;
    ctx.call_id = call_id;
    ctx.workdir = workdir_;
    ctx.cwd = workdir_;
    return ctx;
  }
  void RememberDiff(const std::string& call_id, std::string diff) override {
    diffs.emplace_back(call_id, std::move(diff));
  }
  std::optional<ApprovalGate::Answer> Ask(const v1::PendingApproval& approval) override {
    asked.push_back(approval);
    return answer;
  }

  v1::PolicyMode mode = v1::POLICY_MODE_ASK;
  std::optional<ApprovalGate::Answer> answer;  // nullopt: the turn was cancelled
  std::vector<std::string> errors, notices;
  std::vector<std::pair<std::string, std::string>> diffs;
  std::vector<v1::PendingApproval> asked;

 private:
  std::string workdir_;
};

class CallGuardTest : public ::testing::Test {
 protected:
  CallGuardTest() : host_(tmp_.Join("project")) {
    files_.user_config = tmp_.Join("config/config.json");
    files_.project = tmp_.Join("project");
    files_.trust_store = tmp_.Join("state/trusted-hooks.json");
    WriteFile(files_.project + "/notes.txt", "one\n");
  }

  // A guard with these rules (allow, deny: rule texts) and these user hooks (JSON, or none).
  CallGuard& Make(std::vector<std::string> allow = {}, std::vector<std::string> deny = {},
                  const std::string& hooks_json = "") {
    if (!hooks_json.empty()) WriteFile(files_.user_config, R"({"hooks": )" + hooks_json + "}");
    policy::RuleSet set;
    for (const std::string& r : allow) set.allow.push_back(*policy::ParseRule(r));
    for (const std::string& r : deny) set.deny.push_back(*policy::ParseRule(r));
    rules_ = std::make_unique<policy::FixedRuleSource>(std::move(set));
    MakeHooks();
    guard_ = std::make_unique<CallGuard>(&host_, files_.project, rules_.get(), hooks_.get(),
                                         /*confines=*/false);
    return *guard_;
  }
  void MakeHooks() {
    hooks::SessionHooks::Info info{"s1", files_.project, tmp_.Join("s1.json"), false, false};
    hooks_ = std::make_unique<hooks::SessionHooks>(
        info, files_,
        [] {
          return hooks::HookContext{"default", {"PATH=/usr/bin:/bin"}, ""};
        },
        [](const std::string&, bool) {});
  }
  // The built-in tool of that name, whose schema the guard checks a hook's changes against.
  const tools::Tool& T(const std::string& name) { return *registry_.Find(name); }
  static llm::ToolCall Call(const std::string& name, const std::string& id = "c1") {
    llm::ToolCall c;
    c.id = id;
    c.name = name;
    return c;
  }

  TempDir tmp_;
  hooks::HookFiles files_;
  FakeHost host_;
  std::unique_ptr<policy::RuleSource> rules_;
  std::unique_ptr<hooks::SessionHooks> hooks_;
  std::unique_ptr<CallGuard> guard_;
  tools::ToolRegistry registry_ = tools::ToolRegistry::CreateCore();
};

TEST_F(CallGuardTest, AnAllowedEditRunsUnaskedAndItsDiffIsKept) {
  CallGuard& g = Make({"write_file(notes.txt)"});
  Json args{{"path", "notes.txt"}, {"content", "two\n"}};
  EXPECT_FALSE(g.Before(Call("write_file"), T("write_file"), &args).has_value());
  EXPECT_TRUE(host_.asked.empty());
  ASSERT_EQ(host_.diffs.size(), 1u);
  EXPECT_EQ(host_.diffs[0].first, "c1");
  EXPECT_NE(host_.diffs[0].second.find("+two"), std::string::npos) << host_.diffs[0].second;
}

TEST_F(CallGuardTest, WhatNoRuleDecidesIsAskedAndThePersonsAnswerCounts) {
  CallGuard& g = Make();
  Json args{{"command", "make test"}};
  host_.answer = ApprovalGate::Answer{v1::DECISION_DENY, {}, "not now", "term"};
  std::optional<tools::ToolOutcome> out = g.Before(Call("bash"), T("bash"), &args);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->is_error);
  EXPECT_EQ(out->content, "The user denied this call: not now");
  ASSERT_EQ(host_.asked.size(), 1u);
  EXPECT_EQ(host_.asked[0].call_id(), "c1");
  EXPECT_FALSE(host_.asked[0].proposed_rules().empty());
  EXPECT_FALSE(host_.asked[0].requires_person());

  host_.answer = ApprovalGate::Answer{v1::DECISION_ALLOW_ONCE, {}, "", "term"};
  EXPECT_FALSE(g.Before(Call("bash", "c2"), T("bash"), &args).has_value());
  host_.answer.reset();  // cancelled while waiting
  out = g.Before(Call("bash", "c3"), T("bash"), &args);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->content, "Not run: cancelled by the user.");
}

TEST_F(CallGuardTest, ADenyRuleBeatsAHooksAllow) {
  CallGuard& g = Make({}, {"bash(rm *)"}, R"({"PreToolUse": [{"hooks": [{"command":
      "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}'"}]}]})");
  Json args{{"command", "rm -rf build"}};
  std::optional<tools::ToolOutcome> out = g.Before(Call("bash"), T("bash"), &args);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->denied_by_policy);
  EXPECT_TRUE(host_.asked.empty());
  // Without the deny rule the hook's allow runs it unasked.
  Json ls{{"command", "ls"}};
  EXPECT_FALSE(g.Before(Call("bash", "c2"), T("bash"), &ls).has_value());
  EXPECT_TRUE(host_.asked.empty());
}

// A run without a terminal (deny-unruled): a hook's allow runs the call as it would where a
// person is attached; deny rules, protected paths and escalations still refuse.
TEST_F(CallGuardTest, AHooksAllowRunsACallInARunWithoutATerminal) {
  CallGuard& g = Make({}, {"bash(rm *)"}, R"({"PreToolUse": [{"hooks": [{"command":
      "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}'"}]}]})");
  host_.mode = v1::POLICY_MODE_DENY_UNRULED;
  Json ls{{"command", "ls"}};
  EXPECT_FALSE(g.Before(Call("bash", "c1"), T("bash"), &ls).has_value());
  Json rm{{"command", "rm -rf build"}};
  std::optional<tools::ToolOutcome> out = g.Before(Call("bash", "c2"), T("bash"), &rm);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->content, "Denied by a permission rule of this project.");
  Json hook{{"path", ".git/hooks/pre-commit"}, {"content", "#!/bin/sh\n"}};
  out = g.Before(Call("write_file", "c3"), T("write_file"), &hook);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->content.find("Only the user can allow this"), std::string::npos) << out->content;
  Json escalate{{"command", "ls"}, {"escalate", true}, {"justification", "host"}};
  out = g.Before(Call("bash", "c4"), T("bash"), &escalate);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->content.find("nobody can be asked"), std::string::npos) << out->content;
  EXPECT_TRUE(host_.asked.empty());
}

TEST_F(CallGuardTest, AFailedGuardNeverFailsOpenEvenUnderYes) {
  CallGuard& g = Make({}, {}, R"({"PreToolUse": [{"hooks": [{"command": "exit 1"}]}]})");
  host_.mode = v1::POLICY_MODE_YES;
  host_.answer = ApprovalGate::Answer{v1::DECISION_ALLOW_ONCE, {}, "", "term"};
  Json args{{"command", "ls"}};
  EXPECT_FALSE(g.Before(Call("bash"), T("bash"), &args).has_value());
  ASSERT_EQ(host_.asked.size(), 1u) << "yes mode ran a call whose guard failed";
  EXPECT_TRUE(host_.asked[0].requires_person());
  // A read-only tool is never asked about: its failed guard refuses it.
  Json read{{"path", "notes.txt"}};
  std::optional<tools::ToolOutcome> out = g.Before(Call("read_file", "c2"), T("read_file"), &read);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->denied_by_policy);
}

TEST_F(CallGuardTest, AProtectedPathIsAPersonsDecisionWhateverTheRulesSay) {
  CallGuard& g = Make({"write_file(*)"});
  Json args{{"path", ".git/hooks/pre-commit"}, {"content", "#!/bin/sh\n"}};
  // --yes and an allow rule are not enough: refused, and the model is told to ask the person.
  host_.mode = v1::POLICY_MODE_YES;
  std::optional<tools::ToolOutcome> out = g.Before(Call("write_file"), T("write_file"), &args);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->content.find("Only the user can allow this"), std::string::npos) << out->content;
  EXPECT_TRUE(host_.asked.empty());
  // Where a person can answer, the person is asked, and told it is theirs alone to allow.
  host_.mode = v1::POLICY_MODE_ASK;
  host_.answer = ApprovalGate::Answer{v1::DECISION_DENY, {}, "", "term"};
  out = g.Before(Call("write_file", "c2"), T("write_file"), &args);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(host_.asked.size(), 1u);
  EXPECT_TRUE(host_.asked[0].requires_person());
  EXPECT_FALSE(host_.asked[0].person_reason().empty());
}

TEST_F(CallGuardTest, RulesThatDoNotParseStopGatedToolsAndAreToldOnce) {
  rules_ = std::make_unique<policy::FixedRuleSource>(
      absl::FailedPreconditionError("settings.json:3: bad rule"));
  MakeHooks();
  CallGuard g(&host_, files_.project, rules_.get(), hooks_.get(), false);
  host_.mode = v1::POLICY_MODE_YES;
  for (const char* id : {"c1", "c2"}) {
    Json args{{"command", "ls"}};
    std::optional<tools::ToolOutcome> out = g.Before(Call("bash", id), T("bash"), &args);
    ASSERT_TRUE(out.has_value());
    EXPECT_NE(out->content.find("bad rule"), std::string::npos) << out->content;
  }
  ASSERT_EQ(host_.errors.size(), 1u);
  EXPECT_NE(host_.errors[0].find("gated tools are stopped"), std::string::npos);
}

}  // namespace
}  // namespace agent::daemon
