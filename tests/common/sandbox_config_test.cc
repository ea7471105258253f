#include "common/sandbox_config.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/status_matchers.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::ScopedEnv;
using ::agent::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr char kPath[] = "/home/u/.config/agent/config.json";

absl::Status FromJson(const std::string& text, SandboxConfig* out) {
  return SandboxConfigFromJson(Json::parse(text), kPath, out);
}

TEST(SandboxConfigTest, DefaultsConfineToTheWorkspaceWithoutNetwork) {
  SandboxConfig c;
  EXPECT_EQ(c.mode, "workspace-write");
  EXPECT_FALSE(c.network);
  EXPECT_THAT(c.network_allow, IsEmpty());
  EXPECT_THAT(c.network_deny, IsEmpty());
  EXPECT_EQ(c.hide, std::nullopt);
  EXPECT_THAT(c.show, IsEmpty());
  // A config without the keys changes nothing.
  EXPECT_THAT(FromJson(R"({"model": "m"})", &c), IsOk());
  EXPECT_EQ(c.mode, "workspace-write");
  EXPECT_EQ(c.hide, std::nullopt);
}

TEST(SandboxConfigTest, ReadsEveryKey) {
  SandboxConfig c;
  ASSERT_THAT(FromJson(R"({"sandbox": "read-only",
                           "sandbox_network": {"allow": ["*.pypi.org", "github.com"],
                                               "deny": ["evil.pypi.org"]},
                           "sandbox_hide": ["~/.ssh", "/etc/secret"],
                           "sandbox_show": ["~/.npmrc"]})",
                       &c),
              IsOk());
  EXPECT_EQ(c.mode, "read-only");
  EXPECT_FALSE(c.network);  // a list goes through the proxy, not the host's network
  EXPECT_THAT(c.network_allow, ElementsAre("*.pypi.org", "github.com"));
  EXPECT_THAT(c.network_deny, ElementsAre("evil.pypi.org"));
  EXPECT_THAT(c.hide, Optional(ElementsAre("~/.ssh", "/etc/secret")));
  EXPECT_THAT(c.show, ElementsAre("~/.npmrc"));
}

TEST(SandboxConfigTest, NetworkTrueOrFalse) {
  SandboxConfig c;
  ASSERT_THAT(FromJson(R"({"sandbox_network": true, "sandbox": "off"})", &c), IsOk());
  EXPECT_TRUE(c.network);
  EXPECT_EQ(c.mode, "off");
  ASSERT_THAT(FromJson(R"({"sandbox_network": false})", &c), IsOk());
  EXPECT_FALSE(c.network);
}

TEST(SandboxConfigTest, AnEmptyHideListIsSetNotDefault) {
  SandboxConfig c;
  ASSERT_THAT(FromJson(R"({"sandbox_hide": []})", &c), IsOk());
  EXPECT_THAT(c.hide, Optional(IsEmpty()));  // hide nothing, not the default list
}

TEST(SandboxConfigTest, AnUnknownModeIsAnErrorNotAnOpenSandbox) {
  for (const char* text : {R"({"sandbox": "none"})", R"({"sandbox": "Off"})",
                           R"({"sandbox": false})", R"({"sandbox": ""})"}) {
    SandboxConfig c;
    EXPECT_THAT(FromJson(text, &c), StatusIs(absl::StatusCode::kInvalidArgument,
                                             AllOf(HasSubstr(kPath), HasSubstr("\"sandbox\""))))
        << text;
    EXPECT_EQ(c.mode, "workspace-write") << text;
  }
}

TEST(SandboxConfigTest, AMalformedNetworkValueIsAnError) {
  for (const char* text : {
           R"({"sandbox_network": "yes"})",
           R"({"sandbox_network": 1})",
           R"({"sandbox_network": ["github.com"]})",
           R"({"sandbox_network": {"allowed": []}})",  // a typo of allow
           R"({"sandbox_network": {"allow": "github.com"}})",
           R"({"sandbox_network": {"deny": [1]}})",
       }) {
    SandboxConfig c;
    EXPECT_THAT(FromJson(text, &c),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(kPath), HasSubstr("\"sandbox_network\""))))
        << text;
    EXPECT_FALSE(c.network) << text;
  }
}

TEST(SandboxConfigTest, HiddenAndShownPathsMustBeAbsoluteOrHome) {
  for (const char* key : {"sandbox_hide", "sandbox_show"}) {
    for (const std::string value : {R"(".ssh")", R"(["relative/path"])", R"(["~user/x"])",
                                    R"(["~"])", R"([""])", R"([1])", R"({"a": "/x"})"}) {
      SandboxConfig c;
      const std::string text = std::string(R"({")") + key + R"(": )" + value + "}";
      EXPECT_THAT(FromJson(text, &c),
                  StatusIs(absl::StatusCode::kInvalidArgument,
                           AllOf(HasSubstr(kPath), HasSubstr(std::string("\"") + key + "\""))))
          << text;
      EXPECT_EQ(c.hide, std::nullopt) << text;
      EXPECT_THAT(c.show, IsEmpty()) << text;
    }
  }
}

TEST(SandboxConfigTest, TheEnvironmentSetsTheMode) {
  ScopedEnv env;
  env.Unset("AGENT_SANDBOX");
  SandboxConfig c;
  c.mode = "read-only";
  EXPECT_THAT(SandboxConfigFromEnv(&c), IsOk());
  EXPECT_EQ(c.mode, "read-only");  // unset: the config's choice stands

  env.Set("AGENT_SANDBOX", "");
  EXPECT_THAT(SandboxConfigFromEnv(&c), IsOk());
  EXPECT_EQ(c.mode, "read-only");  // empty counts as unset

  env.Set("AGENT_SANDBOX", "off");
  EXPECT_THAT(SandboxConfigFromEnv(&c), IsOk());
  EXPECT_EQ(c.mode, "off");
}

TEST(SandboxConfigTest, AnUnknownModeInTheEnvironmentIsAnError) {
  ScopedEnv env;
  env.Set("AGENT_SANDBOX", "disabled");
  SandboxConfig c;
  EXPECT_THAT(SandboxConfigFromEnv(&c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AGENT_SANDBOX=disabled")));
  EXPECT_EQ(c.mode, "workspace-write");
}

TEST(SandboxConfigTest, ThreeModes) {
  EXPECT_TRUE(IsSandboxMode("workspace-write"));
  EXPECT_TRUE(IsSandboxMode("read-only"));
  EXPECT_TRUE(IsSandboxMode("off"));
  EXPECT_FALSE(IsSandboxMode(""));
  EXPECT_FALSE(IsSandboxMode("READ-ONLY"));
  EXPECT_FALSE(IsSandboxMode("danger-full-access"));
}

}  // namespace
}  // namespace agent
