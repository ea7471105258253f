// LoadRules and MergeRules against real files in a fresh temp directory.
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "daemon/policy/rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/policy/test_util.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using testing::Formatted;

class SettingsTest : public testing::RulesDirTest {
 protected:
  std::string Read(const std::string& path) {
    absl::StatusOr<std::string> text = ReadFileToString(path);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }
};

TEST_F(SettingsTest, MissingFileIsAnEmptyRuleSet) {
  absl::StatusOr<RuleSet> rules = LoadRules(Path("nope/settings.json"));
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(rules->allow, IsEmpty());
  EXPECT_THAT(rules->deny, IsEmpty());
}

TEST_F(SettingsTest, LoadsAllowAndDenyAndIgnoresOtherFields) {
  const std::string path = Write(
      "settings.json",
      R"j({"model": "x", "allow": ["bash(pytest *)", "edit_file(src/**)"], "deny": ["bash(rm *)"]})j");
  absl::StatusOr<RuleSet> rules = LoadRules(path);
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(pytest *)", "edit_file(src/**)"));
  EXPECT_THAT(Formatted(rules->deny), ElementsAre("bash(rm *)"));
}

TEST_F(SettingsTest, MissingOrNullListsAreEmpty) {
  absl::StatusOr<RuleSet> rules = LoadRules(Write("s.json", R"j({"allow": null})j"));
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(rules->allow, IsEmpty());
  EXPECT_THAT(rules->deny, IsEmpty());
}

TEST_F(SettingsTest, MalformedJsonIsInvalidArgumentNamingTheFile) {
  const std::string path = Write("broken.json", R"j({"allow": ["bash(ls)",)j");
  absl::StatusOr<RuleSet> rules = LoadRules(path);
  EXPECT_EQ(rules.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr(path));
}

TEST_F(SettingsTest, MalformedRuleIsInvalidArgumentNamingFileAndIndex) {
  const std::string path =
      Write("bad_rule.json", R"j({"allow": ["bash(ls)"], "deny": ["bash(x"]})j");
  absl::StatusOr<RuleSet> rules = LoadRules(path);
  EXPECT_EQ(rules.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("deny[0]"));
}

TEST_F(SettingsTest, ErrorsNameTheLineAndColumn) {
  struct Case {
    const char* content;
    const char* where;  // `:line:column: ` and the start of the problem
  };
  for (const Case& c : {
           Case{"{\n  \"allow\": [\"bash(ls)\",]\n}", ":2:24: invalid JSON: syntax error"},
           Case{"{\"allow\": [", ":1:12: invalid JSON"},
           Case{"\n\n  [1]", ":3:3: settings must be a JSON object"},
           Case{"{\n\"x\": 1,\n  \"deny\" : \"bash\"}", ":3:3: \"deny\" must be an array"},
           Case{"{\n\"allow\": [\n  \"bash(ls)\",\n  7]}", ":2:1: allow[1] must be a string"},
           Case{"{\"allow\": [\"bash(ls)\",\n\n     \"bash(ls\"]}",
                ":3:6: allow[1]: rule `bash(ls`"},
           // The same text elsewhere in the file first: the entry's own line.
           Case{"{\"note\": [\"bash(ls\"],\n\"allow\":\n[\"bash(ls\"]}", ":3:2: allow[0]"},
       }) {
    const std::string path = Write("where.json", c.content);
    absl::StatusOr<RuleSet> rules = LoadRules(path);
    EXPECT_EQ(rules.status().code(), absl::StatusCode::kInvalidArgument) << c.content;
    EXPECT_THAT(std::string(rules.status().message()), HasSubstr(path + c.where)) << c.content;
  }
}

TEST_F(SettingsTest, WrongShapesAreInvalidArgument) {
  for (const char* content :
       {R"([])", R"("allow")", R"({"allow": "bash"})", R"({"allow": [1]})", R"({"deny": {}})"}) {
    absl::StatusOr<RuleSet> rules = LoadRules(Write("shape.json", content));
    EXPECT_EQ(rules.status().code(), absl::StatusCode::kInvalidArgument) << content;
  }
}

TEST(MergeRules, PutsFromFirstAndDropsDuplicates) {
  RuleSet from;
  from.allow = {Rule{"bash", "ls"}, Rule{"edit_file", ""}};
  from.deny = {Rule{"bash", "rm *"}};
  RuleSet into;
  into.allow = {Rule{"Bash", "ls"}, Rule{"bash", "make"}};
  MergeRules(from, &into);
  EXPECT_THAT(Formatted(into.allow), ElementsAre("bash(ls)", "edit_file", "bash(make)"));
  EXPECT_THAT(Formatted(into.deny), ElementsAre("bash(rm *)"));
}

}  // namespace
}  // namespace agent::daemon::policy
