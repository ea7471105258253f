// A redirection is a write: a rule that allows a command by prefix does not allow its output
// redirections to files that may be outside the project (issue 26, "approvals that learn").
#include "daemon/policy/command_words.h"
#include "daemon/policy/rules.h"
#include "gtest/gtest.h"
#include "tests/daemon/policy/test_util.h"

namespace agent::daemon::policy {
namespace {

RuleSet Allow(const std::string& rule) {
  RuleSet r;
  r.allow.push_back(*ParseRule(rule));
  return r;
}

TEST(RedirectionsTest, APrefixRuleDoesNotAllowWritingOutsideTheProject) {
  const RuleSet r = Allow("bash(git status *)");
  for (const char* c :
       {"git status -s > /tmp/out.txt", "git status >> ~/.bashrc", "git status > ../elsewhere",
        "git status &> /tmp/x", "git status 2> /var/tmp/err", "git status > $HOME/x",
        "git status >| /tmp/x", "git status > \"/tmp/x\"", "git status >/tmp/x",
        "git status > a/../../x"}) {
    EXPECT_EQ(testing::Bash(r, c), Verdict::kAsk) << c;
  }
  for (const char* c :
       {"git status", "git status -s > out.txt", "git status 2>/dev/null", "git status >&2",
        "git status > build/status.txt 2>&1", "git status > /dev/fd/3"}) {
    EXPECT_EQ(testing::Bash(r, c), Verdict::kAllow) << c;
  }
}

TEST(RedirectionsTest, AnExactRuleOrTheWholeToolStillAllowsIt) {
  EXPECT_EQ(
      testing::Bash(Allow("bash(git status -s > /tmp/out.txt)"), "git status -s > /tmp/out.txt"),
      Verdict::kAllow);
  EXPECT_EQ(testing::Bash(Allow("bash"), "git status -s > /tmp/out.txt"), Verdict::kAllow);
}

TEST(RedirectionsTest, OutputTargetsAreTheWrittenWordsOnly) {
  std::vector<ShellWord> t = OutputRedirectionTargets("cat < in > out 2>&1 >> 'a b' <<EOF");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].value, "out");
  EXPECT_EQ(t[1].value, "a b");
}

}  // namespace
}  // namespace agent::daemon::policy
