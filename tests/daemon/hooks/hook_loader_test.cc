#include "daemon/hooks/hook_loader.h"

#include <string>

#include "daemon/hooks/hook_trust.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::hooks {
namespace {

using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;

class HookLoaderTest : public ::testing::Test {
 protected:
  HookLoaderTest() {
    files_.user_config = tmp_.Join("config/config.json");
    files_.project = tmp_.Join("project");
    files_.trust_store = tmp_.Join("state/trusted-hooks.json");
    WriteFile(files_.project + "/README", "");
  }
  static std::string Hook(const std::string& command) {
    return R"({"hooks": {"PostToolUse": [{"hooks": [{"command": ")" + command + R"("}]}]}})";
  }
  static std::vector<std::string> Commands(const std::vector<HookCommand>& hooks) {
    std::vector<std::string> out;
    for (const HookCommand& h : hooks) out.push_back(h.command);
    return out;
  }
  TempDir tmp_;
  HookFiles files_;
};

TEST_F(HookLoaderTest, AnEditTakesEffectAtTheNextLoad) {
  WriteFile(files_.user_config, Hook("first"));
  EXPECT_EQ(Commands(LoadHooks(files_).commands), std::vector<std::string>{"first"});
  WriteFile(files_.user_config, Hook("second, longer"));
  EXPECT_EQ(Commands(LoadHooks(files_).commands), std::vector<std::string>{"second, longer"});
  WriteFile(files_.user_config, "{}");
  EXPECT_TRUE(LoadHooks(files_).commands.empty());
}

TEST_F(HookLoaderTest, AProjectsHooksRunOnlyOnceTrustedAndTrustIsSeenAtOnce) {
  WriteFile(files_.project + "/.agent/settings.json", Hook("make lint"));
  HookSet before = LoadHooks(files_);
  EXPECT_TRUE(before.commands.empty());
  ASSERT_EQ(Commands(before.untrusted), std::vector<std::string>{"make lint"});
  ASSERT_TRUE(
      TrustHooks(files_.trust_store, files_.project, {before.untrusted[0].TrustKey()}).ok());
  HookSet after = LoadHooks(files_);
  EXPECT_EQ(Commands(after.commands), std::vector<std::string>{"make lint"});
  EXPECT_TRUE(after.untrusted.empty());
}

TEST_F(HookLoaderTest, ABrokenFileIsAProblemNotAnEmptySet) {
  WriteFile(files_.user_config, "{not json");
  HookSet set = LoadHooks(files_);
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_NE(set.problems[0].find("config.json"), std::string::npos) << set.problems[0];
}

}  // namespace
}  // namespace agent::daemon::hooks
