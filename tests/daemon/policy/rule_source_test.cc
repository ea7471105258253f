// FileRuleSource against real files in a fresh temp directory; FixedRuleSource.
#include "daemon/policy/rule_source.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.h"
#include "daemon/policy/trusted_rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/policy/test_util.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using testing::Formatted;

class RuleSourceTest : public testing::RulesDirTest {};

TEST_F(RuleSourceTest, MissingFilesContributeNothing) {
  FileRuleSource source({Path("nope.json"), Path("no/dir/settings.json")});
  absl::StatusOr<RuleSet> rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(rules->allow, IsEmpty());
  EXPECT_THAT(rules->deny, IsEmpty());
  EXPECT_EQ(source.reads_for_test(), 0);
}

TEST_F(RuleSourceTest, MergesTheFilesAndCachesThem) {
  const std::string user = Write("config.json", R"j({"allow": ["bash(ls)"], "model": "x"})j");
  const std::string project =
      Write(".agent/settings.json", R"j({"allow": ["bash(make *)"], "deny": ["bash(rm *)"]
})j");
  FileRuleSource source({user, project});
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<RuleSet> rules = source.Rules();
    ASSERT_TRUE(rules.ok()) << rules.status();
    EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(make *)", "bash(ls)"));
    EXPECT_THAT(Formatted(rules->deny), ElementsAre("bash(rm *)"));
  }
  EXPECT_EQ(source.reads_for_test(), 2);  // each file once
}

TEST_F(RuleSourceTest, ReloadsAFileThatChanged) {
  const std::string path = Write("settings.json", R"j({"allow": ["bash(ls)"]})j");
  FileRuleSource source({path});
  ASSERT_TRUE(source.Rules().ok());
  // Same size, new content: the stamp (inode, mtime, ctime) differs.
  Write("settings.json", R"j({"allow": ["bash(df)"]
  })j");
  absl::StatusOr<RuleSet> rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(df)"));
  EXPECT_EQ(source.reads_for_test(), 2);
  // Removed: nothing.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(rules->allow, IsEmpty());
}

TEST_F(RuleSourceTest, AFileThatDoesNotParseFailsClosedWithFileAndLine) {
  const std::string user = Write("config.json", R"j({"deny": ["bash(rm *)"]})j");
  const std::string project = Write(
      "settings.json", "{\n  \"deny\": [\"bash(git push *)\"],\n  \"allow\": [\"bash(ls)\",]\n}\n");
  FileRuleSource source({user, project});
  absl::StatusOr<RuleSet> rules = source.Rules();
  EXPECT_EQ(rules.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr(project + ":3:"));
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("invalid JSON"));
  // Cached: the broken file is not parsed again until it changes, and still fails.
  EXPECT_FALSE(source.Rules().ok());
  EXPECT_EQ(source.reads_for_test(), 2);

  Write("settings.json", "{\n  \"allow\": [\"bash(ls)\"],\n  \"deny\": [\"bash(ls\"]\n}\n");
  rules = source.Rules();
  EXPECT_EQ(rules.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr(project + ":3:12: deny[0]"));
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("unbalanced parentheses"));

  Write("settings.json", R"j({"deny": ["bash(git push *)"]
  })j");
  rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(Formatted(rules->deny), ElementsAre("bash(git push *)", "bash(rm *)"));
}

TEST_F(RuleSourceTest, SymlinkedProjectSettingsAreRefused) {
  const std::string target = Write("elsewhere.json", R"j({"allow": ["bash"]})j");
  std::filesystem::create_directories(Path(".agent"));
  std::filesystem::create_symlink(target, Path(".agent/settings.json"));
  FileRuleSource source({Path(".agent/settings.json")});
  absl::StatusOr<RuleSet> rules = source.Rules();
  EXPECT_EQ(rules.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr(Path(".agent/settings.json")));
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("symbolic link"));
  EXPECT_EQ(source.reads_for_test(), 0);

  // A dangling symlink is refused too, not taken for a missing file.
  std::filesystem::create_symlink(Path("nowhere.json"), Path("dangling.json"));
  EXPECT_FALSE(FileRuleSource({Path("dangling.json")}).Rules().ok());

  // Nor is the directory holding it followed.
  std::filesystem::create_directories(Path("real"));
  Write("real/settings.json", R"j({"allow": ["bash"]})j");
  std::filesystem::create_directories(Path("proj"));
  std::filesystem::create_directory_symlink(Path("real"), Path("proj/.agent"));
  rules = FileRuleSource({Path("proj/.agent/settings.json")}).Rules();
  EXPECT_EQ(rules.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("symbolic link"));
}

TEST_F(RuleSourceTest, SymlinksAreFollowedForPathsThatAllowThem) {
  const std::string target = Write("dotfiles/config.json", R"j({"allow": ["bash(ls)"]})j");
  std::filesystem::create_symlink(target, Path("config.json"));
  FileRuleSource source({Path("config.json")}, {Path("config.json")});
  absl::StatusOr<RuleSet> rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(ls)"));
}

TEST_F(RuleSourceTest, NotARegularFileIsAnError) {
  std::filesystem::create_directories(Path("settings.json"));
  EXPECT_EQ(FileRuleSource({Path("settings.json")}).Rules().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(RuleSourceTest, ConcurrentCallersSeeTheSameRules) {
  const std::string path = Write("settings.json", R"j({"allow": ["bash(ls)"]})j");
  FileRuleSource source({path});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        absl::StatusOr<RuleSet> rules = source.Rules();
        ASSERT_TRUE(rules.ok());
        ASSERT_EQ(rules->allow.size(), 1u);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(source.reads_for_test(), 1);
}

// A person's "always" rules: in their own store, bound to the project directory as it is, so
// another repository cloned at the same path inherits none.
TEST_F(RuleSourceTest, PersonalRulesCountForTheirProjectDirectoryOnly) {
  const std::string project = Path("project");
  std::filesystem::create_directories(project);
  const std::string settings = project + "/.agent/settings.json";
  const std::string store = Path("state/personal-rules.json");
  auto source = [&] {
    return FileRuleSource(
        {settings}, {},
        ProjectTrust{settings, Path("state/trusted-rules.json"), project, "", store});
  };
  ASSERT_TRUE(TrustRules(store, project, {"bash(make *)"}).ok());
  {
    FileRuleSource s = source();
    absl::StatusOr<RuleSet> rules = s.Rules();
    ASSERT_TRUE(rules.ok()) << rules.status();
    EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(make *)"));
    EXPECT_THAT(s.UntrustedRules(), IsEmpty());  // a person's own rule needs no trust
  }
  // Gone, and another cloned at the same path: the store's entry is for the old directory.
  std::filesystem::remove_all(project);
  std::filesystem::create_directories(project + "/.agent");
  FileRuleSource s = source();
  absl::StatusOr<RuleSet> rules = s.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(rules->allow, IsEmpty());
}

TEST(FixedRuleSource, ReturnsWhatItWasGiven) {
  RuleSet set;
  set.deny.push_back(Rule{"bash", "rm *"});
  FixedRuleSource rules(set);
  ASSERT_TRUE(rules.Rules().ok());
  EXPECT_THAT(Formatted(rules.Rules()->deny), ElementsAre("bash(rm *)"));
  FixedRuleSource failing(absl::FailedPreconditionError("x:1:1: broken"));
  EXPECT_EQ(failing.Rules().status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace agent::daemon::policy
