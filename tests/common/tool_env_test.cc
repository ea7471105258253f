#include "common/tool_env.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::vector<std::string> kClientEnv = {
    "PATH=/home/u/.venv/bin:/usr/bin",
    "HOME=/home/u",
    "VIRTUAL_ENV=/home/u/.venv",
    "AGENT_API_KEY=sk-test-SECRET123",
    "AGENT_BASE_URL=http://127.0.0.1:1/v1",
    "OPENAI_API_KEY=sk-openai",
    "MY_TOKEN=t",
    "DB_PASSWORD=p",
    "aws_secret_access_key=s",
    "github_token=g",
    "Ssh_Passwd=x",
    "KEYBOARD_LAYOUT=de",  // "KEY" anywhere counts: better one variable too many dropped
    "LANG=C.UTF-8",
    // Credentials no name filter catches: the allow-list leaves them out.
    "SSH_AUTH_SOCK=/run/user/1000/ssh-agent.sock",
    "DATABASE_URL=postgres://user:pass@db/x",
    "GOOGLE_APPLICATION_CREDENTIALS=/home/u/gcp.json",
    "DOCKER_AUTH_CONFIG={}",
    "SLACK_WEBHOOK_URL=https://hooks.example/T0/B0/x",
    "COOKIE=session=1",
    "AUTH=basic",
    "CREDENTIALS=x",
    "https_proxy=http://u:p@proxy:3128",
};

TEST(ToolEnv, PassesOnlyTheAllowListWithoutSecretsOrTheAgentsOwnVariables) {
  EXPECT_THAT(BuildToolEnvironment(kClientEnv, {}),
              ElementsAre("PATH=/home/u/.venv/bin:/usr/bin", "HOME=/home/u",
                          "VIRTUAL_ENV=/home/u/.venv", "LANG=C.UTF-8"));
}

TEST(ToolEnv, NamesAreMatchedCaseInsensitivelyByTheBuiltInRules) {
  for (const char* name : {"my_token", "Db_Password", "x_SeCrEt_y", "apikey", "AGENT_MODEL",
                           "agent_lowercase_is_not_listed", "PASSAGE", "SSH_AUTH_SOCK"}) {
    EXPECT_TRUE(ToolEnvDrops(name, {})) << name;
  }
  for (const char* name : {"PATH", "TERM", "LC_ALL", "GOPATH", "CCACHE_DIR"}) {
    EXPECT_FALSE(ToolEnvDrops(name, {})) << name;
  }
}

TEST(ToolEnv, KeepWinsOverTheBuiltInDrops) {
  ToolEnvPolicy p;
  p.keep = {"MY_TOKEN", "KEYBOARD_*", "DATABASE_URL"};  // how a person adds a variable
  EXPECT_THAT(BuildToolEnvironment(kClientEnv, p),
              UnorderedElementsAre("PATH=/home/u/.venv/bin:/usr/bin", "HOME=/home/u",
                                   "VIRTUAL_ENV=/home/u/.venv", "MY_TOKEN=t", "KEYBOARD_LAYOUT=de",
                                   "LANG=C.UTF-8", "DATABASE_URL=postgres://user:pass@db/x"));
}

TEST(ToolEnv, DropAddsToTheBuiltInDropsAndWinsOverKeep) {
  ToolEnvPolicy p;
  p.drop = {"VIRTUAL_*", "HOME"};
  p.keep = {"HOME"};
  EXPECT_THAT(BuildToolEnvironment(kClientEnv, p),
              ElementsAre("PATH=/home/u/.venv/bin:/usr/bin", "LANG=C.UTF-8"));
}

TEST(ToolEnv, GlobsMatchTheWholeNameCaseSensitively) {
  ToolEnvPolicy p;
  p.drop = {"LAN?", "*_ENV"};
  EXPECT_TRUE(ToolEnvDrops("LANG", p));
  EXPECT_FALSE(ToolEnvDrops("LANGUAGE", p));
  EXPECT_TRUE(ToolEnvDrops("VIRTUAL_ENV", p));
  ToolEnvPolicy k;
  k.keep = {"my_*"};
  EXPECT_FALSE(ToolEnvDrops("my_var", k));
  EXPECT_TRUE(ToolEnvDrops("MY_VAR", k));  // not kept (case counts), and not on the list
}

TEST(ToolEnv, MalformedAndRepeatedEntries) {
  EXPECT_THAT(BuildToolEnvironment({"NOEQUALS", "=value", "TZ=1", "TZ=2", "CC=x=y", "CI="}, {}),
              ElementsAre("TZ=1", "CC=x=y", "CI="));
  EXPECT_THAT(BuildToolEnvironment({"X_TOKEN=1", "X_TOKEN=2"}, {}), IsEmpty());
}

TEST(ToolEnv, TheKeyInUseIsDroppedByValueWhateverTheNameOrKeepList) {
  ToolEnvPolicy p;
  p.keep = {"*"};
  std::vector<std::string> env =
      BuildToolEnvironment({"AGENT_API_KEY=sk-1", "INNOCENT=sk-1", "PATH=/bin", "OTHER=sk-10"}, p);
  DropEntriesWithValue(&env, "sk-1");
  EXPECT_THAT(env, ElementsAre("PATH=/bin", "OTHER=sk-10"));
  DropEntriesWithValue(&env, "");
  EXPECT_THAT(env, ElementsAre("PATH=/bin", "OTHER=sk-10"));
}

TEST(ToolEnv, MergeTakesThePrimarysNonEmptyLists) {
  ToolEnvPolicy client{{"A"}, {}};
  ToolEnvPolicy daemon{{"B"}, {"C"}};
  ToolEnvPolicy m = MergeToolEnvPolicy(client, daemon);
  EXPECT_THAT(m.keep, ElementsAre("A"));
  EXPECT_THAT(m.drop, ElementsAre("C"));
}

TEST(ToolEnv, MinimalEnvironmentHasAFixedPathAndNothingOfThisProcessBeyondHomeAndLang) {
  const char* old_path = std::getenv("PATH");
  const std::string saved_path = old_path != nullptr ? old_path : "/usr/bin:/bin";
  ::setenv("AGENT_API_KEY", "sk-must-not-leak", 1);
  ::setenv("PATH", "/somewhere/private:/usr/bin", 1);
  std::vector<std::string> env = MinimalToolEnvironment();
  ::setenv("PATH", saved_path.c_str(), 1);
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(env[1].rfind("HOME=/", 0), 0u);
  EXPECT_EQ(env[2].rfind("LANG=", 0), 0u);
  ::unsetenv("AGENT_API_KEY");
}

TEST(ToolEnv, ProcessEnvironmentListsThisProcesssVariables) {
  ::setenv("TOOL_ENV_TEST_MARK", "42", 1);
  EXPECT_THAT(ProcessEnvironment(), ::testing::Contains("TOOL_ENV_TEST_MARK=42"));
  ::unsetenv("TOOL_ENV_TEST_MARK");
}

// LoadConfig with `json` as $XDG_CONFIG_HOME/agent/config.json.
absl::StatusOr<Config> LoadConfigText(const std::string& json) {
  // A directory of its own: CTest runs the tests of this file as parallel processes.
  agent::testing::TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  std::filesystem::create_directories(dir / "agent");
  std::ofstream(dir / "agent" / "config.json") << json;
  const char* old = std::getenv("XDG_CONFIG_HOME");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
  absl::StatusOr<Config> c = LoadConfig();
  if (saved.has_value()) {
    ::setenv("XDG_CONFIG_HOME", saved->c_str(), 1);
  } else {
    ::unsetenv("XDG_CONFIG_HOME");
  }
  return c;
}

TEST(ToolEnvConfig, ReadsKeepAndDropFromConfigJson) {
  absl::StatusOr<Config> c =
      LoadConfigText(R"({"tool_env": {"keep": ["GH_TOKEN"], "drop": ["AWS_*", "X"]}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->tool_env.keep, ElementsAre("GH_TOKEN"));
  EXPECT_THAT(c->tool_env.drop, ElementsAre("AWS_*", "X"));
  c = LoadConfigText(R"({"model": "m"})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->tool_env.keep, IsEmpty());
  EXPECT_THAT(c->tool_env.drop, IsEmpty());
}

TEST(ToolEnvConfig, AMalformedToolEnvIsAnErrorNamingTheFile) {
  for (const char* bad : {R"({"tool_env": ["X"]})", R"({"tool_env": {"keep": "X"}})",
                          R"({"tool_env": {"drop": [1]}})", R"({"tool_env": {"keep": [""]}})"}) {
    absl::StatusOr<Config> c = LoadConfigText(bad);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(c.status().message(), ::testing::HasSubstr("config.json")) << bad;
    EXPECT_THAT(c.status().message(), ::testing::HasSubstr("tool_env")) << bad;
  }
}

}  // namespace
}  // namespace agent
