#include "daemon/hooks/hook_decision.h"

#include "gtest/gtest.h"

namespace agent::daemon::hooks {
namespace {

HookRun Exited(int code, std::string out = "", std::string err = "") {
  HookRun r;
  r.started = r.exited = true;
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

HookCommand Cmd(std::string_view event) { return {std::string(event), "", "hook.sh"}; }

HookOutcome One(std::string_view event, HookRun run) {
  return Decide(event, {Cmd(event)}, {std::move(run)});
}

TEST(HookDecisionTest, ExitTwoBlocksWithStderr) {
  HookOutcome o = One(kPreToolUse, Exited(2, "", "no pushing\n"));
  EXPECT_TRUE(o.block);
  EXPECT_EQ(o.permission, Permission::kDeny);
  EXPECT_EQ(o.reason, "no pushing");
  EXPECT_TRUE(o.failures.empty());
}

TEST(HookDecisionTest, OtherExitsTimeoutsAndSignalsAreFailures) {
  HookRun timed_out;
  timed_out.started = true;
  timed_out.timed_out = true;
  HookRun killed;
  killed.started = true;
  killed.term_signal = 11;
  HookRun unstarted;
  unstarted.error = "no shell";
  for (const HookRun& r : {Exited(1, "", "boom"), timed_out, killed, unstarted}) {
    HookOutcome o = One(kPreToolUse, r);
    EXPECT_EQ(o.failures.size(), 1u);
    EXPECT_EQ(o.permission, Permission::kNone);
    EXPECT_FALSE(o.block);
  }
}

TEST(HookDecisionTest, AGuardThatPrintsGarbageFails) {
  EXPECT_EQ(One(kPreToolUse, Exited(0, "sure, go ahead")).failures.size(), 1u);
  EXPECT_EQ(One(kPermissionRequest, Exited(0, "{not json")).failures.size(), 1u);
  EXPECT_EQ(One(kPreToolUse, Exited(0, R"({"hookSpecificOutput":
      {"permissionDecision": "maybe"}})"))
                .failures.size(),
            1u);
  // Not a guard: plain stdout is harmless.
  EXPECT_TRUE(One(kPostToolUse, Exited(0, "formatted 1 file")).failures.empty());
  // A guard that prints nothing has no opinion.
  HookOutcome quiet = One(kPreToolUse, Exited(0));
  EXPECT_TRUE(quiet.failures.empty());
  EXPECT_EQ(quiet.permission, Permission::kNone);
}

TEST(HookDecisionTest, PreToolUseDecisionReasonAndUpdatedInput) {
  HookOutcome o = One(kPreToolUse, Exited(0, R"({"hookSpecificOutput": {
      "hookEventName": "PreToolUse", "permissionDecision": "allow",
      "permissionDecisionReason": "ls is fine", "updatedInput": {"command": "ls -la"}}})"));
  EXPECT_EQ(o.permission, Permission::kAllow);
  EXPECT_EQ(o.reason, "ls is fine");
  ASSERT_TRUE(o.updated_input.has_value());
  EXPECT_EQ((*o.updated_input)["command"], "ls -la");
  // Claude Code's older top-level form.
  EXPECT_EQ(One(kPreToolUse, Exited(0, R"({"decision": "block", "reason": "r"})")).permission,
            Permission::kDeny);
}

TEST(HookDecisionTest, PermissionRequestBehavior) {
  HookOutcome o = One(kPermissionRequest, Exited(0, R"({"hookSpecificOutput": {
      "decision": {"behavior": "deny", "message": "not today"}}})"));
  EXPECT_EQ(o.permission, Permission::kDeny);
  EXPECT_EQ(o.reason, "not today");
}

TEST(HookDecisionTest, DenyWinsOverAskOverAllow) {
  const std::string allow = R"({"hookSpecificOutput": {"permissionDecision": "allow"}})";
  const std::string ask = R"({"hookSpecificOutput": {"permissionDecision": "ask"}})";
  const std::string deny =
      R"({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "d"}})";
  auto three = [&](std::string a, std::string b) {
    return Decide(kPreToolUse, {Cmd(kPreToolUse), Cmd(kPreToolUse)},
                  {Exited(0, std::move(a)), Exited(0, std::move(b))});
  };
  EXPECT_EQ(three(allow, ask).permission, Permission::kAsk);
  EXPECT_EQ(three(ask, allow).permission, Permission::kAsk);
  HookOutcome denied = three(allow, deny);
  EXPECT_EQ(denied.permission, Permission::kDeny);
  EXPECT_EQ(denied.reason, "d");
  EXPECT_TRUE(denied.block);
}

// Whose allow it was: a project's hook runs files the model can rewrite, so only the user's
// own allow may stand in for an absent person (call_guard.h).
TEST(HookDecisionTest, AnAllowSaysWhetherTheUsersOwnHookGaveIt) {
  const std::string allow = R"({"hookSpecificOutput": {"permissionDecision": "allow"}})";
  HookCommand project = Cmd(kPreToolUse);
  project.origin = HookOrigin::kProject;
  HookOutcome theirs = Decide(kPreToolUse, {project}, {Exited(0, allow)});
  EXPECT_EQ(theirs.permission, Permission::kAllow);
  EXPECT_FALSE(theirs.user_allowed);
  HookOutcome mine = Decide(kPreToolUse, {Cmd(kPreToolUse)}, {Exited(0, allow)});
  EXPECT_TRUE(mine.user_allowed);
  EXPECT_TRUE(Decide(kPreToolUse, {project, Cmd(kPreToolUse)}, {Exited(0, allow), Exited(0, allow)})
                  .user_allowed);
}

TEST(HookDecisionTest, ContextFromStdoutAndAdditionalContext) {
  EXPECT_EQ(One(kSessionStart, Exited(0, "branch main, 2 todos\n")).context,
            std::vector<std::string>{"branch main, 2 todos"});
  EXPECT_EQ(One(kUserPromptSubmit, Exited(0, R"({"hookSpecificOutput":
      {"additionalContext": "ticket 7"}})"))
                .context,
            std::vector<std::string>{"ticket 7"});
  HookOutcome blocked = One(kUserPromptSubmit, Exited(0, R"({"decision": "block",
      "reason": "secrets"})"));
  EXPECT_TRUE(blocked.block);
  EXPECT_EQ(blocked.reason, "secrets");
}

TEST(HookDecisionTest, ContinueFalseAndSystemMessage) {
  HookOutcome o = One(kStop, Exited(0, R"({"continue": false, "stopReason": "enough",
      "systemMessage": "tests pass"})"));
  EXPECT_TRUE(o.stop);
  EXPECT_EQ(o.stop_reason, "enough");
  EXPECT_EQ(o.messages, std::vector<std::string>{"tests pass"});
}

}  // namespace
}  // namespace agent::daemon::hooks
