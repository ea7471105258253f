#include "daemon/hooks/hook_config.h"

#include "gtest/gtest.h"

namespace agent::daemon::hooks {
namespace {

Json Hooks(std::string_view text) { return *ParseJson(text); }

TEST(HookConfigTest, ParsesClaudeCodesShape) {
  auto hooks = ParseHooks(Hooks(R"({"PreToolUse": [{"matcher": "bash|Edit", "hooks": [
      {"type": "command", "command": "guard.sh", "timeout": 5},
      {"type": "command", "command": "log.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "more.sh"}]}]})"),
                          HookOrigin::kProject, "settings.json");
  ASSERT_TRUE(hooks.ok()) << hooks.status();
  ASSERT_EQ(hooks->size(), 3u);
  EXPECT_EQ((*hooks)[0].event, "PreToolUse");
  EXPECT_EQ((*hooks)[0].matcher, "bash|Edit");
  EXPECT_EQ((*hooks)[0].timeout_s, 5);
  EXPECT_EQ((*hooks)[1].timeout_s, kDefaultTimeoutS);
  EXPECT_EQ((*hooks)[2].event, "Stop");
  EXPECT_EQ((*hooks)[2].origin, HookOrigin::kProject);
}

TEST(HookConfigTest, SkipsUnknownEventsAndOtherTypes) {
  auto hooks = ParseHooks(Hooks(R"({"FutureEvent": [{"hooks": [{"command": "x"}]}],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}]})"),
                          HookOrigin::kUser, "config.json");
  ASSERT_TRUE(hooks.ok());
  EXPECT_TRUE(hooks->empty());
}

TEST(HookConfigTest, MalformedShapesNameThePlace) {
  for (const char* bad : {R"({"Stop": {}})", R"({"Stop": [{"hooks": [{"command": 3}]}]})",
                          R"({"PreToolUse": [{"matcher": "(", "hooks": []}]})",
                          R"({"Stop": [{"hooks": [{"command": "x", "timeout": -1}]}]})", "[]"}) {
    auto hooks = ParseHooks(Hooks(bad), HookOrigin::kUser, "config.json");
    EXPECT_EQ(hooks.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(hooks.status().message().find("config.json"), std::string_view::npos);
  }
}

TEST(HookConfigTest, MatchersTakeOurNamesAndClaudeCodesAliases) {
  EXPECT_TRUE(MatcherSelects("bash", "bash"));
  EXPECT_TRUE(MatcherSelects("Bash", "bash"));
  EXPECT_TRUE(MatcherSelects("Edit|Write", "edit_file"));
  EXPECT_TRUE(MatcherSelects("Edit|Write", "write_file"));
  EXPECT_TRUE(MatcherSelects("MultiEdit", "edit_file"));
  EXPECT_TRUE(MatcherSelects("", "anything"));
  EXPECT_TRUE(MatcherSelects("*", "anything"));
  EXPECT_TRUE(MatcherSelects("mcp__.*", "mcp__git__status"));
  EXPECT_FALSE(MatcherSelects("bash", "bash_extra"));  // the whole name
  EXPECT_FALSE(MatcherSelects("Edit", "read_file"));
  EXPECT_EQ(ClaudeToolName("find_files"), "Glob");
  EXPECT_EQ(ClaudeToolName("nope"), "");
}

TEST(HookConfigTest, TrustKeyChangesWithTheHook) {
  HookCommand a{"PreToolUse", "bash", "guard.sh", 5, HookOrigin::kProject};
  HookCommand b = a;
  EXPECT_EQ(a.TrustKey(), b.TrustKey());
  b.command = "guard.sh --lenient";
  EXPECT_NE(a.TrustKey(), b.TrustKey());
  b = a;
  b.matcher = ".*";
  EXPECT_NE(a.TrustKey(), b.TrustKey());
}

}  // namespace
}  // namespace agent::daemon::hooks
