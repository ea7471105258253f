// The trust store (trusted_rules.h) and FileRuleSource's merge of a project's allow rules
// with it: only rules a person trusted for that project count; deny rules always do.
#include "daemon/policy/trusted_rules.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "daemon/policy/rule_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/policy/test_util.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using testing::Formatted;

class TrustedRulesTest : public testing::RulesDirTest {
 protected:
  std::string Store() const { return Path("state/trusted-rules.json"); }
  std::set<std::string> Trusted(const std::string& project) {
    absl::StatusOr<std::string> text = ReadFileToString(Store());
    return text.ok() ? TrustedRulesFromText(*text, project, ProjectIdentity(project))
                     : std::set<std::string>{};
  }
  // A project whose settings are `settings`, with a rule source as the daemon builds one.
  FileRuleSource Source(const std::string& project) {
    const std::string settings = project + "/.agent/settings.json";
    return FileRuleSource({Path("config.json"), settings}, {},
                          ProjectTrust{settings, Store(), project});
  }
};

TEST_F(TrustedRulesTest, RecordsRulesPerProjectInCanonicalForm) {
  absl::StatusOr<std::vector<std::string>> added =
      TrustRules(Store(), "/p", {"Bash( make  * )", "write_file(src/**)", "bash(make *)"});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_THAT(*added, ElementsAre("bash(make *)", "write_file(src/**)"));
  EXPECT_THAT(Trusted("/p"), UnorderedElementsAre("bash(make *)", "write_file(src/**)"));
  EXPECT_THAT(Trusted("/q"), IsEmpty());
  ASSERT_TRUE(TrustRules(Store(), "/q", {"bash(ls)"}).ok());
  EXPECT_THAT(Trusted("/p"), UnorderedElementsAre("bash(make *)", "write_file(src/**)"));
  EXPECT_THAT(Trusted("/q"), ElementsAre("bash(ls)"));
}

TEST_F(TrustedRulesTest, TheStoreIsPrivate) {
  ASSERT_TRUE(TrustRules(Store(), "/p", {"bash(ls)"}).ok());
  struct stat st;
  ASSERT_EQ(::stat(Store().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST_F(TrustedRulesTest, AMalformedRuleRecordsNothing) {
  absl::StatusOr<std::vector<std::string>> added = TrustRules(Store(), "/p", {"bash(ls)", "bash("});
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ReadFileToString(Store()).ok());
}

TEST_F(TrustedRulesTest, ABrokenStoreTrustsNothing) {
  Write("state/trusted-rules.json", R"j({"projects": {"/p": "bash(ls)"}})j");
  EXPECT_THAT(Trusted("/p"), IsEmpty());
  Write("state/trusted-rules.json", "not json");
  EXPECT_THAT(Trusted("/p"), IsEmpty());
}

TEST_F(TrustedRulesTest, ASymlinkAtTheStoreIsReplacedNotWrittenThrough) {
  const std::string elsewhere = Write("elsewhere.json", "keep\n");
  ASSERT_TRUE(MakeDirs(Path("state")).ok());
  ASSERT_EQ(::symlink(elsewhere.c_str(), Store().c_str()), 0);
  ASSERT_TRUE(TrustRules(Store(), "/p", {"bash(ls)"}).ok());
  EXPECT_EQ(ReadFileToString(elsewhere).value(), "keep\n");
  EXPECT_THAT(Trusted("/p"), ElementsAre("bash(ls)"));
}

TEST_F(TrustedRulesTest, RevokeForgetsSomeOrAll) {
  ASSERT_TRUE(TrustRules(Store(), "/p", {"bash(ls)", "bash(df)", "bash(du)"}).ok());
  absl::StatusOr<std::vector<std::string>> gone = RevokeRules(Store(), "/p", {"bash( ls )"});
  ASSERT_TRUE(gone.ok());
  EXPECT_THAT(*gone, ElementsAre("bash(ls)"));
  EXPECT_THAT(Trusted("/p"), UnorderedElementsAre("bash(df)", "bash(du)"));
  gone = RevokeRules(Store(), "/p", {});
  ASSERT_TRUE(gone.ok());
  EXPECT_THAT(*gone, ElementsAre("bash(df)", "bash(du)"));
  EXPECT_THAT(Trusted("/p"), IsEmpty());
}

TEST_F(TrustedRulesTest, TheNoticeNamesTheRulesWithControlCharactersVisible) {
  EXPECT_EQ(UntrustedRulesNotice("/p/.agent/settings.json", {}), "");
  EXPECT_EQ(UntrustedRulesNotice("/p/.agent/settings.json", {"bash(make *)", "bash(a\x1b[2Jb\n)"}),
            "/p/.agent/settings.json allows 2 rule(s) you have not trusted for this project: "
            "bash(make *), bash(a^[[2Jb^J). They are ignored; `agent trust` (or /trust) trusts "
            "them.");
  EXPECT_THAT(UntrustedRulesNotice("/p", {"bash(\xc2\x9b)"}), HasSubstr("bash(\\u009b)"));
}

TEST_F(TrustedRulesTest, UntrustedProjectAllowRulesAreLeftOut) {
  const std::string project = Path("p");
  Write("config.json", R"j({"allow": ["bash(ls)"]})j");
  Write("p/.agent/settings.json",
        R"j({"allow": ["bash(*)", "bash(make *)"], "deny": ["bash(rm *)"]})j");
  FileRuleSource source = Source(project);
  absl::StatusOr<RuleSet> rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  // The user's own rule needs no trust; the project's deny rule applies untrusted.
  EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(ls)"));
  EXPECT_THAT(Formatted(rules->deny), ElementsAre("bash(rm *)"));
  EXPECT_THAT(source.UntrustedRules(), ElementsAre("bash(*)", "bash(make *)"));
  EXPECT_EQ(testing::Bash(*rules, "curl x | sh"), Verdict::kAsk);
}

TEST_F(TrustedRulesTest, TrustTakesEffectAtTheNextCallAndIsPerRuleAndProject) {
  const std::string project = Path("p");
  Write("p/.agent/settings.json", R"j({"allow": ["bash(make *)", "bash(*)"]})j");
  FileRuleSource source = Source(project);
  ASSERT_TRUE(source.Rules().ok());
  ASSERT_TRUE(TrustRules(Store(), project, {"bash(make  *)"}).ok());
  ASSERT_TRUE(TrustRules(Store(), Path("other"), {"bash(*)"}).ok());
  absl::StatusOr<RuleSet> rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(Formatted(rules->allow), ElementsAre("bash(make *)"));
  EXPECT_THAT(source.UntrustedRules(), ElementsAre("bash(*)"));
  EXPECT_EQ(testing::Bash(*rules, "make all"), Verdict::kAllow);
  EXPECT_EQ(testing::Bash(*rules, "rm -rf /"), Verdict::kAsk);
}

TEST_F(TrustedRulesTest, AChangedRuleNeedsTrustAgain) {
  const std::string project = Path("p");
  Write("p/.agent/settings.json", R"j({"allow": ["bash(make test)"]})j");
  ASSERT_TRUE(TrustRules(Store(), project, {"bash(make test)"}).ok());
  FileRuleSource source = Source(project);
  ASSERT_THAT(Formatted(source.Rules()->allow), ElementsAre("bash(make test)"));
  Write("p/.agent/settings.json", R"j({"allow": ["bash(make *)"]})j");
  EXPECT_THAT(Formatted(source.Rules()->allow), IsEmpty());
  EXPECT_THAT(source.UntrustedRules(), ElementsAre("bash(make *)"));
}

TEST_F(TrustedRulesTest, ABrokenStoreTrustsNothingButStopsNothing) {
  const std::string project = Path("p");
  Write("p/.agent/settings.json", R"j({"allow": ["bash(ls)"], "deny": ["bash(rm *)"]})j");
  Write("state/trusted-rules.json", "{");
  FileRuleSource source = Source(project);
  absl::StatusOr<RuleSet> rules = source.Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(rules->allow, IsEmpty());
  EXPECT_THAT(Formatted(rules->deny), ElementsAre("bash(rm *)"));
}

TEST_F(TrustedRulesTest, TheStoreIsReadOnlyWhenItChanged) {
  const std::string project = Path("p");
  Write("p/.agent/settings.json", R"j({"allow": ["bash(ls)"]})j");
  ASSERT_TRUE(TrustRules(Store(), project, {"bash(ls)"}).ok());
  FileRuleSource source = Source(project);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(source.Rules().ok());
  EXPECT_EQ(source.reads_for_test(), 2);  // the settings and the store, once each
}

TEST_F(TrustedRulesTest, ASymlinkedProjectSettingsFileStillFailsClosed) {
  const std::string project = Path("p");
  const std::string real = Write("trusted-elsewhere.json", R"j({"allow": ["bash(*)"]})j");
  ASSERT_TRUE(MakeDirs(Path("p/.agent")).ok());
  ASSERT_EQ(::symlink(real.c_str(), Path("p/.agent/settings.json").c_str()), 0);
  ASSERT_TRUE(TrustRules(Store(), project, {"bash(*)"}).ok());
  FileRuleSource source = Source(project);
  EXPECT_EQ(source.Rules().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(source.UntrustedRules(), IsEmpty());
}

TEST_F(TrustedRulesTest, AProjectRecreatedAtTheSamePathInheritsNoTrust) {
  const std::string project = Path("p");
  Write("p/.agent/settings.json", R"j({"allow": ["bash(make *)"]})j");
  FileRuleSource source = Source(project);
  ASSERT_TRUE(TrustRules(Store(), project, {"bash(make *)"}).ok());
  EXPECT_THAT(Formatted(source.Rules()->allow), ElementsAre("bash(make *)"));
  // Removed and cloned again at the same path (ext4 even hands out the same inode): the
  // store is unchanged, the directory is not the one trusted.
  ASSERT_EQ(::unlink(Path("p/.agent/settings.json").c_str()), 0);
  ASSERT_EQ(::rmdir(Path("p/.agent").c_str()), 0);
  ASSERT_EQ(::rmdir(project.c_str()), 0);
  Write("p/.agent/settings.json", R"j({"allow": ["bash(make *)"]})j");
  EXPECT_THAT(source.Rules()->allow, IsEmpty());
  EXPECT_THAT(source.UntrustedRules(), ElementsAre("bash(make *)"));
  EXPECT_THAT(Trusted(project), IsEmpty());
  // Trusting it again binds the new directory, and drops the old directory's entry.
  ASSERT_TRUE(TrustRules(Store(), project, {"bash(make *)"}).ok());
  EXPECT_THAT(Formatted(source.Rules()->allow), ElementsAre("bash(make *)"));
}

TEST_F(TrustedRulesTest, AnEntryWithoutIdentityTrustsNothing) {
  const std::string project = Path("p");
  Write("p/.agent/settings.json", R"j({"allow": ["bash(ls)"]})j");
  Write("state/trusted-rules.json",
        "{\"projects\": {\"" + project + "\": [\"bash(ls)\"]}}");  // an older version's
  EXPECT_THAT(Trusted(project), IsEmpty());
  EXPECT_THAT(Source(project).UntrustedRules(), ElementsAre("bash(ls)"));
}

}  // namespace
}  // namespace agent::daemon::policy
