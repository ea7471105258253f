#include "client/link/client_settings.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::HasSubstr;

EnvLookup From(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ClientSettingsTest, EverySettingTheClientExportedIsSent) {
  auto s = ClientSettingsFromEnv(From({{"AGENT_MAX_STEPS", "1"},
                                       {"AGENT_MAX_ATTEMPTS", "2"},
                                       {"AGENT_COMPACT_AT", "5000000000"},
                                       {"AGENT_CONTEXT_TOKENS", "128000"},
                                       {"AGENT_IDLE_TIMEOUT_MS", "3000"},
                                       {"AGENT_CONNECT_TIMEOUT_MS", "400"},
                                       {"AGENT_BASH_TIMEOUT", "9"}}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->max_steps(), 1);
  EXPECT_EQ(s->max_attempts(), 2);
  EXPECT_EQ(s->compact_at_chars(), 5000000000);
  EXPECT_EQ(s->context_tokens(), 128000);
  EXPECT_EQ(s->idle_timeout_ms(), 3000);
  EXPECT_EQ(s->connect_timeout_ms(), 400);
  EXPECT_EQ(s->bash_timeout_s(), 9);
  EXPECT_EQ(ClientSettingNames().size(), 7u);
}

TEST(ClientSettingsTest, UnsetOrEmptyLeavesZeroForTheDaemonToFill) {
  auto s = ClientSettingsFromEnv(From({{"AGENT_MAX_STEPS", ""}}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->max_steps(), 0);
  EXPECT_EQ(s->ByteSizeLong(), 0u);
}

TEST(ClientSettingsTest, ATypoIsAnErrorNamingTheVariable) {
  for (const char* bad : {"1O", "-3", "0", "2147483648", "1.5"}) {
    auto s = ClientSettingsFromEnv(From({{"AGENT_MAX_STEPS", bad}}));
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("AGENT_MAX_STEPS="));
  }
}

}  // namespace
}  // namespace agent::client
