#include "daemon/context/context_config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::context {
namespace {

using ::agent::testing::ScopedEnv;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr char kDir[] = "/home/u/.config/agent";

ContextConfig FromText(const std::string& text) {
  return ContextConfigFromJson(Json::parse(text), kDir);
}

TEST(ContextConfigTest, DefaultsWithoutTheKeys) {
  for (const char* text : {R"({})", R"({"model": "m"})", R"([1, 2])", R"(null)"}) {
    ContextConfig c = FromText(text);
    EXPECT_THAT(c.instruction_fallbacks, ElementsAre("CLAUDE.md")) << text;
    EXPECT_EQ(c.instruction_max_bytes, 32 * 1024) << text;
    EXPECT_EQ(c.system_prompt_append, "") << text;
    EXPECT_EQ(c.system_prompt_file, "") << text;
    EXPECT_TRUE(c.prices.empty()) << text;
    EXPECT_EQ(c.problem, "") << text;
  }
}

TEST(ContextConfigTest, ReadsEveryKey) {
  ContextConfig c = FromText(R"({
    "instruction_fallbacks": ["GEMINI.md", "CONVENTIONS.md"],
    "instruction_max_bytes": 1000,
    "system_prompt_append": "Answer in French.",
    "system_prompt_file": "/etc/agent/prompt.md",
    "prices": {"m": {"input": 1, "output": 2}}
  })");
  EXPECT_THAT(c.instruction_fallbacks, ElementsAre("GEMINI.md", "CONVENTIONS.md"));
  EXPECT_EQ(c.instruction_max_bytes, 1000);
  EXPECT_EQ(c.system_prompt_append, "Answer in French.");
  EXPECT_EQ(c.system_prompt_file, "/etc/agent/prompt.md");  // absolute: as given
  ASSERT_NE(c.prices.Find("m"), nullptr);
  EXPECT_DOUBLE_EQ(c.prices.Find("m")->output, 2.0);
  EXPECT_EQ(c.problem, "");
}

TEST(ContextConfigTest, EmptyFallbacksAndZeroBytesAreAllowed) {
  ContextConfig c = FromText(R"({"instruction_fallbacks": [], "instruction_max_bytes": 0})");
  EXPECT_THAT(c.instruction_fallbacks, IsEmpty());  // AGENTS.md only
  EXPECT_EQ(c.instruction_max_bytes, 0);
  EXPECT_EQ(c.problem, "");
}

TEST(ContextConfigTest, ARelativePromptFileIsInTheConfigDirectory) {
  EXPECT_EQ(FromText(R"({"system_prompt_file": "prompt.md"})").system_prompt_file,
            std::string(kDir) + "/prompt.md");
  EXPECT_EQ(FromText(R"({"system_prompt_file": "sub/p.md"})").system_prompt_file,
            std::string(kDir) + "/sub/p.md");
}

TEST(ContextConfigTest, BadFallbacksKeepTheDefaultAndSaySo) {
  for (const char* text : {
           R"({"instruction_fallbacks": "CLAUDE.md"})",
           R"({"instruction_fallbacks": ["ok.md", 3]})",
           R"({"instruction_fallbacks": [""]})",
           R"({"instruction_fallbacks": ["docs/AGENTS.md"]})",  // a name, not a path
           R"({"instruction_fallbacks": ["../secret"]})",
       }) {
    ContextConfig c = FromText(text);
    EXPECT_THAT(c.instruction_fallbacks, ElementsAre("CLAUDE.md")) << text;
    EXPECT_THAT(c.problem, HasSubstr("\"instruction_fallbacks\"")) << text;
  }
}

TEST(ContextConfigTest, BadMaxBytesKeepTheDefaultAndSaySo) {
  for (const char* text : {R"({"instruction_max_bytes": -1})", R"({"instruction_max_bytes": 1.5})",
                           R"({"instruction_max_bytes": "32k"})"}) {
    ContextConfig c = FromText(text);
    EXPECT_EQ(c.instruction_max_bytes, 32 * 1024) << text;
    EXPECT_THAT(c.problem, HasSubstr("\"instruction_max_bytes\"")) << text;
  }
}

TEST(ContextConfigTest, BadPricesAreAProblemAndNoPrices) {
  ContextConfig c = FromText(R"({"prices": {"m": {"input": -1, "output": 2}}})");
  EXPECT_TRUE(c.prices.empty());
  EXPECT_THAT(c.problem, HasSubstr("\"prices\""));
}

TEST(ContextConfigTest, EveryProblemIsReportedAndTheGoodKeysStillApply) {
  ContextConfig c = FromText(R"({"instruction_fallbacks": 1, "instruction_max_bytes": -5,
                                 "prices": [], "system_prompt_append": "kept"})");
  EXPECT_THAT(c.problem,
              AllOf(HasSubstr("\"instruction_fallbacks\""),
                    HasSubstr("; \"instruction_max_bytes\""), HasSubstr("; \"prices\"")));
  EXPECT_EQ(c.system_prompt_append, "kept");
}

class LoadContextConfigTest : public ::testing::Test {
 protected:
  LoadContextConfigTest() { env_.Set("XDG_CONFIG_HOME", dir_.path()); }
  std::string ConfigDir() const { return dir_.Join("agent"); }

  TempDir dir_;
  ScopedEnv env_;
};

TEST_F(LoadContextConfigTest, DefaultsWithoutAFile) {
  ContextConfig c = LoadContextConfig();
  EXPECT_THAT(c.instruction_fallbacks, ElementsAre("CLAUDE.md"));
  EXPECT_EQ(c.problem, "");
}

TEST_F(LoadContextConfigTest, ReadsTheFileAndResolvesAgainstItsDirectory) {
  WriteFile(ConfigDir() + "/config.json",
            R"({"instruction_max_bytes": 99, "system_prompt_file": "mine.md"})");
  ContextConfig c = LoadContextConfig();
  EXPECT_EQ(c.instruction_max_bytes, 99);
  EXPECT_EQ(c.system_prompt_file, ConfigDir() + "/mine.md");
  EXPECT_EQ(c.problem, "");
}

TEST_F(LoadContextConfigTest, AProblemNamesTheFile) {
  WriteFile(ConfigDir() + "/config.json", R"({"instruction_max_bytes": -1})");
  ContextConfig c = LoadContextConfig();
  EXPECT_EQ(c.instruction_max_bytes, 32 * 1024);
  EXPECT_THAT(c.problem, AllOf(StartsWith(ConfigDir() + "/config.json: "),
                               HasSubstr("\"instruction_max_bytes\"")));
}

TEST_F(LoadContextConfigTest, ABrokenFileGivesDefaultsWithoutAProblem) {
  // LoadConfig reports a file that is not JSON; this one does not say it twice.
  WriteFile(ConfigDir() + "/config.json", R"({"instruction_max_bytes": 5,)");
  ContextConfig c = LoadContextConfig();
  EXPECT_EQ(c.instruction_max_bytes, 32 * 1024);
  EXPECT_EQ(c.problem, "");
}

}  // namespace
}  // namespace agent::daemon::context
