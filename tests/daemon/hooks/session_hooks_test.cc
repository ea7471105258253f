#include "daemon/hooks/session_hooks.h"

#include <stdlib.h>

#include <filesystem>

#include "absl/synchronization/notification.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/hooks/hook_trust.h"
#include "daemon/sandbox/sandbox.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::hooks {
namespace {

using testing::ReadFile;
using testing::WriteFile;

// A project with a user config and a trust store in a temp dir; hooks write into `log`.
class SessionHooksTest : public ::testing::Test {
 protected:
  SessionHooksTest() {
    files_.user_config = tmp_.Join("config/config.json");
    files_.project = tmp_.Join("project");
    files_.trust_store = tmp_.Join("state/trusted-hooks.json");
    WriteFile(files_.project + "/README", "");
  }

  std::unique_ptr<SessionHooks> Make(bool resumed = false,
                                     std::shared_ptr<const sandbox::Sandbox> sandbox = nullptr) {
    SessionHooks::Info info{"s1", files_.project, tmp_.Join("s1.json"), false, resumed, sandbox};
    return std::make_unique<SessionHooks>(
        info, files_,
        [] {
          return HookContext{"default", {"PATH=/usr/bin:/bin"}, ""};
        },
        [this](const std::string& text, bool failure) {
          MutexLock l(&mu_);
          (failure ? failures_ : notices_).push_back(text);
        });
  }
  void UserHooks(const std::string& hooks) {
    WriteFile(files_.user_config, R"({"hooks": )" + hooks + "}");
  }
  void ProjectHooks(const std::string& hooks) {
    WriteFile(files_.project + "/.agent/settings.json", R"({"hooks": )" + hooks + "}");
  }
  std::vector<std::string> failures() {
    MutexLock l(&mu_);
    return failures_;
  }
  std::vector<std::string> notices() {
    MutexLock l(&mu_);
    return notices_;
  }
  // The sandbox of workspace-write with the default hidden paths; null where bwrap cannot start.
  std::shared_ptr<const sandbox::Sandbox> Sandbox() {
    auto sb = std::make_shared<const sandbox::Sandbox>(
        sandbox::PolicyFromConfig(SandboxConfig{}, tmp_.Join("home"), {}, "", ""));
    return sb->Confines() ? sb : nullptr;
  }
  void TrustAll() {
    std::vector<std::string> keys;
    for (const HookCommand& c : LoadHooks(files_).untrusted) keys.push_back(c.TrustKey());
    ASSERT_TRUE(TrustHooks(files_.trust_store, files_.project, keys).ok());
  }

  testing::TempDir tmp_;
  HookFiles files_;
  Mutex mu_;
  std::vector<std::string> failures_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> notices_ ABSL_GUARDED_BY(mu_);
};

TEST_F(SessionHooksTest, SessionStartOnceThenPromptContext) {
  UserHooks(R"({"SessionStart": [{"matcher": "startup", "hooks": [{"command": "echo started"}]}],
      "UserPromptSubmit": [{"hooks": [{"command": "echo prompt-context"}]}]})");
  auto hooks = Make();
  EXPECT_EQ(hooks->BeforePrompt("hi").context, "started\n\nprompt-context");
  EXPECT_EQ(hooks->BeforePrompt("again").context, "prompt-context");
}

TEST_F(SessionHooksTest, InputCarriesTheContractsFields) {
  const std::string out = tmp_.Join("input.json");
  UserHooks(R"({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "cat > )" + out +
            R"("}]}]})");
  auto hooks = Make();
  ToolGuard g = hooks->BeforeTool("bash", Json{{"command", "ls"}}, "call_1");
  EXPECT_EQ(g.permission, Permission::kNone);
  EXPECT_FALSE(g.failed);
  absl::StatusOr<Json> in = ParseJson(ReadFile(out));
  ASSERT_TRUE(in.ok()) << ReadFile(out);
  EXPECT_EQ((*in)["hook_event_name"], "PreToolUse");
  EXPECT_EQ((*in)["session_id"], "s1");
  EXPECT_EQ((*in)["cwd"], files_.project);
  EXPECT_EQ((*in)["transcript_path"], tmp_.Join("s1.json"));
  EXPECT_EQ((*in)["permission_mode"], "default");
  EXPECT_EQ((*in)["tool_name"], "bash");
  EXPECT_EQ((*in)["tool_input"]["command"], "ls");
  EXPECT_EQ((*in)["tool_call_id"], "call_1");
}

// Claude Code's names where the modes match; plan mode is "plan", and the read-only mode, which
// is no plan mode (nothing is handed over), has its own.
TEST(PermissionModeNameTest, EachModeHasItsName) {
  EXPECT_EQ(PermissionModeName(agent::v1::POLICY_MODE_PLAN), "plan");
  EXPECT_EQ(PermissionModeName(agent::v1::POLICY_MODE_READ_ONLY), "readOnly");
  EXPECT_EQ(PermissionModeName(agent::v1::POLICY_MODE_ACCEPT_EDITS), "acceptEdits");
  EXPECT_EQ(PermissionModeName(agent::v1::POLICY_MODE_YES), "bypassPermissions");
  EXPECT_EQ(PermissionModeName(agent::v1::POLICY_MODE_ASK), "default");
}

TEST_F(SessionHooksTest, AnotherCloneAtTheSamePathTrustsNoneOfTheHooks) {
  ProjectHooks(R"({"PostToolUse": [{"hooks": [{"command": "true"}]}]})");
  HookSet set = LoadHooks(files_);
  ASSERT_EQ(set.untrusted.size(), 1u);
  const std::string key = set.untrusted[0].TrustKey();
  ASSERT_TRUE(TrustHooks(files_.trust_store, files_.project, {key}).ok());
  EXPECT_EQ(TrustedHookKeys(files_.trust_store, files_.project).count(key), 1u);
  // The project is removed and another one, with the same hook, made at its path.
  std::filesystem::remove_all(files_.project);
  std::filesystem::create_directories(files_.project);
  ProjectHooks(R"({"PostToolUse": [{"hooks": [{"command": "true"}]}]})");
  EXPECT_TRUE(TrustedHookKeys(files_.trust_store, files_.project).empty());
  EXPECT_EQ(LoadHooks(files_).untrusted.size(), 1u);
}

TEST_F(SessionHooksTest, AProjectHookRunsOnlyOnceTrustedAndAgainAfterAChange) {
  std::shared_ptr<const sandbox::Sandbox> sandbox = Sandbox();
  if (sandbox == nullptr) GTEST_SKIP() << "bubblewrap cannot start here";
  const std::string mark = files_.project + "/ran";
  ProjectHooks(R"({"PostToolUse": [{"hooks": [{"command": "touch )" + mark + R"("}]}]})");
  auto hooks = Make(false, sandbox);
  hooks->AfterTool("read_file", Json::object(), "c1", "text", false);
  EXPECT_EQ(ReadFile(mark), "<missing>");
  HookSet set = LoadHooks(files_);
  ASSERT_EQ(set.untrusted.size(), 1u);
  ASSERT_TRUE(TrustHooks(files_.trust_store, files_.project, {set.untrusted[0].TrustKey()}).ok());
  hooks->AfterTool("read_file", Json::object(), "c2", "text", false);
  EXPECT_EQ(ReadFile(mark), "");
  // The repository changes the hook: it is another hook, untrusted.
  ProjectHooks(R"({"PostToolUse": [{"hooks": [{"command": "touch )" + mark + R"(2"}]}]})");
  hooks->AfterTool("read_file", Json::object(), "c3", "text", false);
  EXPECT_EQ(ReadFile(mark + "2"), "<missing>");
  EXPECT_EQ(LoadHooks(files_).untrusted.size(), 1u);
}

// A trusted project hook runs a script the model can rewrite from the sandbox: the script runs
// inside the sandbox too, so what it becomes cannot write outside the project.
TEST_F(SessionHooksTest, AProjectHookRunsInsideTheSandboxWhateverItsScriptBecomes) {
  std::shared_ptr<const sandbox::Sandbox> sandbox = Sandbox();
  if (sandbox == nullptr) GTEST_SKIP() << "bubblewrap cannot start here";
  // Outside /tmp, which the sandbox replaces: the build tree.
  std::string tmpl = std::string(AGENT_BINARY_DIR) + "/hook_escape.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string outside = tmpl + "/pwned";
  WriteFile(files_.project + "/scripts/fmt.sh", "touch formatted\n");
  ProjectHooks(R"({"PostToolUse": [{"hooks": [{"command": "sh scripts/fmt.sh"}]}]})");
  TrustAll();
  auto hooks = Make(false, sandbox);
  hooks->AfterTool("write_file", Json::object(), "c1", "ok", false);
  EXPECT_TRUE(std::filesystem::exists(files_.project + "/formatted"));  // it ran, in the project
  // The model rewrites the script (a write inside the project, which the sandbox allows).
  WriteFile(files_.project + "/scripts/fmt.sh", "echo pwned > " + outside + "\n");
  hooks->AfterTool("write_file", Json::object(), "c2", "ok", false);
  EXPECT_FALSE(std::filesystem::exists(outside));
  std::filesystem::remove_all(tmpl);
}

TEST_F(SessionHooksTest, WithoutASandboxAProjectHookDoesNotRunAndThePeopleAreTold) {
  const std::string mark = files_.project + "/ran";
  ProjectHooks(R"({"PostToolUse": [{"hooks": [{"command": "touch )" + mark + R"("}]}]})");
  TrustAll();
  UserHooks(R"({"PostToolUse": [{"hooks": [{"command": "touch )" + mark + R"(-user"}]}]})");
  auto hooks = Make();  // no sandbox
  hooks->AfterTool("read_file", Json::object(), "c1", "text", false);
  hooks->AfterTool("read_file", Json::object(), "c2", "text", false);
  EXPECT_FALSE(std::filesystem::exists(mark));
  EXPECT_TRUE(std::filesystem::exists(mark + "-user"));  // the user's own hooks run as before
  std::vector<std::string> told = notices();
  ASSERT_EQ(told.size(), 1u);  // once per session
  EXPECT_NE(told[0].find("do not run: they run only inside the sandbox"), std::string::npos);
}

TEST_F(SessionHooksTest, AGuardThatCrashesOrHangsFailsAndIsReported) {
  UserHooks(R"({"PreToolUse": [{"matcher": "bash", "hooks": [
      {"command": "kill -SEGV $$"}, {"command": "sleep 30", "timeout": 1}]}]})");
  auto hooks = Make();
  ToolGuard g = hooks->BeforeTool("bash", Json{{"command", "ls"}}, "c1");
  EXPECT_TRUE(g.failed);
  EXPECT_EQ(failures().size(), 2u);
}

TEST_F(SessionHooksTest, UnreadableHooksFailAGuardClosed) {
  WriteFile(files_.user_config, R"({"hooks": {"PreToolUse": "nope"}})");
  auto hooks = Make();
  EXPECT_TRUE(hooks->BeforeTool("bash", Json{{"command", "ls"}}, "c1").failed);
}

TEST_F(SessionHooksTest, StopSendsBackBoundedByTheLimit) {
  WriteFile(files_.user_config, R"({"hooks_stop_limit": 1, "hooks": {"Stop": [{"hooks": [
      {"command": "echo '{\"decision\": \"block\", \"reason\": \"run the tests\"}'"}]}]}})");
  auto hooks = Make();
  EXPECT_EQ(hooks->OnStop(0), "run the tests");
  EXPECT_EQ(hooks->OnStop(1), std::nullopt);
}

TEST_F(SessionHooksTest, NotificationRunsInTheBackgroundAndEndWaitsForIt) {
  const std::string out = tmp_.Join("note.json");
  UserHooks(R"({"Notification": [{"matcher": "permission_prompt", "hooks": [
      {"command": "cat > )" +
            out + R"("}]}], "SessionEnd": [{"hooks": [{"command": "echo x > )" + tmp_.Join("end") +
            R"("}]}]})");
  auto hooks = Make();
  hooks->Notify("permission_prompt", "needs you");
  hooks->End("other");  // SessionStart never ran: no SessionEnd, but the notifier is joined
  absl::StatusOr<Json> in = ParseJson(ReadFile(out));
  ASSERT_TRUE(in.ok());
  EXPECT_EQ((*in)["message"], "needs you");
  EXPECT_EQ((*in)["notification_type"], "permission_prompt");
  EXPECT_EQ(ReadFile(tmp_.Join("end")), "<missing>");
}

TEST_F(SessionHooksTest, SessionEndAfterAStart) {
  UserHooks(R"({"SessionEnd": [{"hooks": [{"command": "cat > )" + tmp_.Join("end") + R"("}]}]})");
  auto hooks = Make(/*resumed=*/true);
  hooks->BeforePrompt("hi");
  hooks->End("daemon stopping");
  hooks->End("twice");
  EXPECT_NE(ReadFile(tmp_.Join("end")).find("daemon stopping"), std::string::npos);
}

}  // namespace
}  // namespace agent::daemon::hooks
