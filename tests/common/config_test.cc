#include "common/config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::ScopedEnv;
using ::agent::testing::StatusIs;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::HasSubstr;

// A config dir of its own and none of the settings' variables from the outer environment.
class ConfigTest : public ::testing::Test {
 protected:
  ConfigTest() {
    env_.Set("XDG_CONFIG_HOME", dir_.path());
    for (const char* name :
         {"AGENT_BASE_URL", "AGENT_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENT_MODEL",
          "AGENT_PROVIDER", "AGENT_COMPACT_AT", "AGENT_CONTEXT_TOKENS", "AGENT_MAX_STEPS",
          "AGENT_BASH_TIMEOUT", "AGENT_CONNECT_TIMEOUT_MS", "AGENT_IDLE_TIMEOUT_MS",
          "AGENT_MAX_ATTEMPTS"}) {
      env_.Unset(name);
    }
  }
  std::string ConfigFile() const { return dir_.Join("agent/config.json"); }

  TempDir dir_;
  ScopedEnv env_;
};

TEST_F(ConfigTest, DefaultsWithoutFileOrEnvironment) {
  auto c = LoadConfig();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->model.base_url, "");
  EXPECT_EQ(c->model.api_key, "");
  EXPECT_EQ(c->model.model, "");
  EXPECT_EQ(c->model.provider, "openai");
  EXPECT_EQ(c->compact_at_chars, 400000);
  EXPECT_EQ(c->context_tokens, 0);
  EXPECT_EQ(c->max_steps, 50);
  EXPECT_EQ(c->bash_timeout_s, 120);
  EXPECT_EQ(c->connect_timeout_ms, 10000);
  EXPECT_EQ(c->idle_timeout_ms, 120000);
  EXPECT_EQ(c->max_attempts, 5);
}

TEST_F(ConfigTest, TheFileOverridesDefaults) {
  WriteFile(ConfigFile(), R"({"base_url": "https://api.anthropic.com/v1/", "api_key": "k",
    "model": "m", "compact_at": 1000, "context_tokens": 8000, "max_steps": 7,
    "bash_timeout_s": 9, "unknown": true})");
  auto c = LoadConfig();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->model.base_url, "https://api.anthropic.com/v1");  // trailing '/' dropped
  EXPECT_EQ(c->model.api_key, "k");
  EXPECT_EQ(c->model.model, "m");
  EXPECT_EQ(c->model.provider, "anthropic");  // derived from the URL
  EXPECT_EQ(c->compact_at_chars, 1000);
  EXPECT_EQ(c->context_tokens, 8000);
  EXPECT_EQ(c->max_steps, 7);
  EXPECT_EQ(c->bash_timeout_s, 9);
  EXPECT_EQ(c->max_attempts, 5);  // not in the file: the default
}

TEST_F(ConfigTest, TheEnvironmentOverridesTheFile) {
  WriteFile(ConfigFile(), R"({"base_url": "http://file", "api_key": "file-key",
    "model": "file-model", "provider": "anthropic", "max_steps": 7, "bash_timeout_s": 9})");
  env_.Set("AGENT_BASE_URL", "http://env/");
  env_.Set("AGENT_MODEL", "env-model");
  env_.Set("AGENT_MAX_STEPS", "3");
  env_.Set("AGENT_IDLE_TIMEOUT_MS", "500");
  env_.Set("AGENT_BASH_TIMEOUT", "not a number");  // ignored: the file's value stays
  auto c = LoadConfig();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->model.base_url, "http://env");
  EXPECT_EQ(c->model.model, "env-model");
  // The file's key and provider belong to the file's URL, not to the one the environment names.
  EXPECT_EQ(c->model.api_key, "");
  EXPECT_EQ(c->model.provider, "openai");
  EXPECT_EQ(c->max_steps, 3);
  EXPECT_EQ(c->idle_timeout_ms, 500);
  EXPECT_EQ(c->bash_timeout_s, 9);
}

TEST_F(ConfigTest, TheFilesKeyStaysWithTheFilesUrl) {
  WriteFile(ConfigFile(), R"({"base_url": "http://file/v1", "api_key": "file-key",
    "provider": "anthropic"})");
  env_.Set("AGENT_BASE_URL", "http://file/v1/");
  env_.Set("AGENT_MODEL", "env-model");
  auto c = LoadConfig();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->model.api_key, "file-key");
  EXPECT_EQ(c->model.provider, "anthropic");
}

TEST_F(ConfigTest, NegativeNumbersInTheEnvironmentAreIgnored) {
  env_.Set("AGENT_MAX_STEPS", "-1");
  auto c = LoadConfig();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->max_steps, 50);
}

TEST_F(ConfigTest, SubagentLimitsAreBounded) {
  WriteFile(ConfigFile(), R"({"subagent_max_depth": 1000, "subagent_max_concurrent": 100000})");
  auto c = LoadConfig();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->subagent_max_depth, kMaxSubagentDepth);
  EXPECT_EQ(c->subagent_max_concurrent, kMaxSubagentConcurrent);
}

TEST_F(ConfigTest, TheApiKeyFallsBackToTheProvidersVariables) {
  env_.Set("ANTHROPIC_API_KEY", "anthropic");
  EXPECT_EQ(ModelSettingsFromEnv().api_key, "anthropic");
  env_.Set("OPENAI_API_KEY", "openai");
  EXPECT_EQ(ModelSettingsFromEnv().api_key, "openai");
  env_.Set("AGENT_API_KEY", "agent");
  EXPECT_EQ(ModelSettingsFromEnv().api_key, "agent");
}

TEST_F(ConfigTest, AMalformedFileIsInvalidArgumentNamingIt) {
  for (const char* bad : {"{\"model\": ", "[1, 2]"}) {
    WriteFile(ConfigFile(), bad);
    EXPECT_THAT(LoadConfig(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(ConfigFile())))
        << bad;
  }
}

TEST(MergeModelSettings, FillsOnlyEmptyFieldsThenDerivesTheProvider) {
  ModelSettings primary{.base_url = "", .api_key = "p-key", .model = "", .provider = ""};
  ModelSettings fallback{
      .base_url = "https://api.anthropic.com//", .api_key = "f-key", .model = "f", .provider = ""};
  ModelSettings m = MergeModelSettings(primary, fallback);
  EXPECT_EQ(m.base_url, "https://api.anthropic.com");
  EXPECT_EQ(m.api_key, "p-key");
  EXPECT_EQ(m.model, "f");
  EXPECT_EQ(m.provider, "anthropic");
  fallback.provider = "openai";
  EXPECT_EQ(MergeModelSettings(primary, fallback).provider, "openai");
}

TEST(MergeModelSettings, AnotherEndpointNeverGetsTheFallbacksKey) {
  ModelSettings fallback{.base_url = "https://api.anthropic.com/v1",
                         .api_key = "anthropic-key",
                         .model = "claude",
                         .provider = "anthropic"};
  ModelSettings primary;
  primary.base_url = "http://127.0.0.1:8080/v1";
  ModelSettings m = MergeModelSettings(primary, fallback);
  EXPECT_EQ(m.base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(m.api_key, "");
  EXPECT_EQ(m.provider, "openai");  // from its own URL, not the other server's
  // The same endpoint (up to a trailing slash) keeps the fallback's key.
  primary.base_url = "https://api.anthropic.com/v1/";
  EXPECT_EQ(MergeModelSettings(primary, fallback).api_key, "anthropic-key");
  // A key configured without a URL is a general one.
  fallback.base_url = "";
  primary.base_url = "http://127.0.0.1:8080/v1";
  EXPECT_EQ(MergeModelSettings(primary, fallback).api_key, "anthropic-key");
}

TEST(IsPerClientSetting, CoversTheSettingsEachClientSends) {
  for (const char* name :
       {"AGENT_BASE_URL", "AGENT_MODEL", "AGENT_PROVIDER", "AGENT_API_KEY", "AGENT_MAX_STEPS",
        "AGENT_MAX_ATTEMPTS", "AGENT_COMPACT_AT", "AGENT_CONTEXT_TOKENS", "AGENT_IDLE_TIMEOUT_MS",
        "AGENT_CONNECT_TIMEOUT_MS", "AGENT_BASH_TIMEOUT"}) {
    EXPECT_TRUE(IsPerClientSetting(name)) << name;
  }
  for (const char* name : {"AGENT_SOCKET", "AGENT_SESSION_IDLE_UNLOAD_S", "PATH", "AGENT_BASE"}) {
    EXPECT_FALSE(IsPerClientSetting(name)) << name;
  }
}

}  // namespace
}  // namespace agent
