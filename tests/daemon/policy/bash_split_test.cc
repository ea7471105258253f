#include "daemon/policy/bash_split.h"

#include <string>
#include <vector>

#include "daemon/policy/rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Split(std::string_view command) { return SplitCompoundCommand(command); }

TEST(BashSplit, SimpleCommandIsOnePartWithWhitespaceCollapsed) {
  EXPECT_THAT(Split("  git   status\t-s  "), ElementsAre("git status -s"));
}

TEST(BashSplit, SplitsOnEveryListOperator) {
  EXPECT_THAT(Split("a && b || c ; d | e |& f & g\nh"),
              ElementsAre("a", "b", "c", "d", "e", "f", "g", "h"));
}

TEST(BashSplit, OperatorsNeedNoSpaces) {
  EXPECT_THAT(Split("a&&b||c;d|e&f"), ElementsAre("a", "b", "c", "d", "e", "f"));
}

TEST(BashSplit, BackgroundAmpersandEndsTheCommand) {
  EXPECT_THAT(Split("sleep 10 & rm -rf tmp"), ElementsAre("sleep 10", "rm -rf tmp"));
  EXPECT_THAT(Split("server &"), ElementsAre("server"));
}

TEST(BashSplit, RedirectionAmpersandsAreNotSeparators) {
  EXPECT_THAT(Split("make 2>&1 | tee log"), ElementsAre("make 2>&1", "tee log"));
  EXPECT_THAT(Split("make &> log"), ElementsAre("make &> log"));
  EXPECT_THAT(Split("echo hi >&2"), ElementsAre("echo hi >&2"));
  EXPECT_THAT(Split("echo hi >| out"), ElementsAre("echo hi >| out"));
}

TEST(BashSplit, EscapedRedirectionCharacterDoesNotHideABackgroundSeparator) {
  // `\>` is a literal `>`, so the `&` after it backgrounds `echo >` and `rm` runs on its own.
  EXPECT_THAT(Split("echo \\>& rm -rf /"), ElementsAre("echo \\>", "rm -rf /"));
}

TEST(BashSplit, QuotesKeepSeparatorsLiteral) {
  EXPECT_THAT(Split("echo \"a && b\" 'c; d' e\\;f"), ElementsAre("echo \"a && b\" 'c; d' e\\;f"));
  EXPECT_THAT(Split("echo \"a  b\""), ElementsAre("echo \"a  b\""));
}

TEST(BashSplit, EscapedQuoteInsideDoubleQuotesDoesNotEndThem) {
  EXPECT_THAT(Split(R"(echo "a \" && b" && c)"), ElementsAre(R"(echo "a \" && b")", "c"));
}

TEST(BashSplit, CommandSubstitutionIsItsOwnPartAndStaysInTheOuterText) {
  EXPECT_THAT(Split("echo $(rm -rf /)"), ElementsAre("echo $(rm -rf /)", "rm -rf /"));
  EXPECT_THAT(Split("echo `whoami`"), ElementsAre("echo `whoami`", "whoami"));
}

TEST(BashSplit, SubstitutionInsideDoubleQuotesIsStillACommand) {
  EXPECT_THAT(Split("echo \"today: $(date) by `id -u`\""),
              ElementsAre("echo \"today: $(date) by `id -u`\"", "date", "id -u"));
  // Single quotes make it text.
  EXPECT_THAT(Split("echo '$(date)'"), ElementsAre("echo '$(date)'"));
}

TEST(BashSplit, NestedSubstitutionsAreSplitRecursively) {
  EXPECT_THAT(Split("a $(b $(c && d) | e)"),
              ElementsAre("a $(b $(c && d) | e)", "b $(c && d)", "c", "d", "e"));
}

TEST(BashSplit, NestedBackticksAreUnescapedBeforeSplitting) {
  EXPECT_THAT(Split("echo `ls \\`pwd\\``"), ElementsAre("echo `ls \\`pwd\\``", "ls `pwd`", "pwd"));
}

TEST(BashSplit, ProcessSubstitutionsAreCommands) {
  EXPECT_THAT(Split("diff <(ls a) >(wc -l)"),
              ElementsAre("diff <(ls a) >(wc -l)", "ls a", "wc -l"));
}

TEST(BashSplit, SubstitutionsInParameterAndArithmeticExpansionsAreCommands) {
  EXPECT_THAT(Split("echo ${X:-$(id)}"), ElementsAre("echo ${X:-$(id)}", "id"));
  EXPECT_THAT(Split("echo $(( $(cat n) + 1 ))"), ElementsAre("echo $(( $(cat n) + 1 ))", "cat n"));
  EXPECT_THAT(Split("echo $((1 + (2 * 3)))"), ElementsAre("echo $((1 + (2 * 3)))"));
}

TEST(BashSplit, SubshellAndGroupContentsAreParts) {
  EXPECT_THAT(Split("(cd sub && make) ; { make test; rm -rf out; }"),
              ElementsAre("cd sub", "make", "make test", "rm -rf out"));
}

TEST(BashSplit, RedirectionAfterASubshellIsAPartOfItsOwn) {
  EXPECT_THAT(Split("(make) > ~/.bashrc"), ElementsAre("make", "> ~/.bashrc"));
  EXPECT_THAT(Split("{ make; } 2>&1 | tee log"), ElementsAre("make", "2>&1", "tee log"));
}

TEST(BashSplit, BracesThatAreNotAGroupStayText) {
  EXPECT_THAT(Split("echo {a,b} {}"), ElementsAre("echo {a,b} {}"));
  EXPECT_THAT(Split("find . -exec ls {} \\;"), ElementsAre("find . -exec ls {} \\;"));
}

TEST(BashSplit, LeadingAssignmentsAndRedirectionsStayInTheText) {
  EXPECT_THAT(Split("FOO=1 make > out.log"), ElementsAre("FOO=1 make > out.log"));
}

TEST(BashSplit, CommentsAreDropped) {
  EXPECT_THAT(Split("# install\nnpm ci # quietly && rm -rf /\necho a#b"),
              ElementsAre("npm ci", "echo a#b"));
  EXPECT_THAT(Split("echo $# \"#\" \\#"), ElementsAre("echo $# \"#\" \\#"));
  EXPECT_THAT(Split("# only a comment"), IsEmpty());
}

TEST(BashSplit, LineContinuationJoinsLines) {
  EXPECT_THAT(Split("git \\\n  status"), ElementsAre("git status"));
}

TEST(BashSplit, ShellKeywordsAreStrippedSoThePartIsWhatRuns) {
  EXPECT_THAT(Split("if git diff --quiet; then echo clean; else rm -rf out; fi"),
              ElementsAre("git diff --quiet", "echo clean", "rm -rf out"));
  EXPECT_THAT(Split("while true; do make; done"), ElementsAre("true", "make"));
  EXPECT_THAT(Split("! grep x f"), ElementsAre("grep x f"));
  // A quoted keyword is a word like any other.
  EXPECT_THAT(Split("\"if\" x"), ElementsAre("\"if\" x"));
}

TEST(BashSplit, ForLoopHeaderIsAPartThatNeedsItsOwnRule) {
  EXPECT_THAT(Split("for f in $(ls); do cat $f; done"),
              ElementsAre("for f in $(ls)", "ls", "cat $f"));
}

TEST(BashSplit, HereDocumentBodyBelongsToItsCommand) {
  const BashCommandParts r =
      ParseBashCommand("cat > out.txt <<'EOF'\na && b; $(not run)\nEOF\necho done");
  EXPECT_FALSE(r.exact_only) << r.error;
  EXPECT_THAT(r.parts, ElementsAre("cat > out.txt <<'EOF' a && b; $(not run) EOF", "echo done"));
}

TEST(BashSplit, UnquotedHereDocumentBodyRunsItsSubstitutions) {
  EXPECT_THAT(Split("cat <<EOF\nuser: $(whoami)\nEOF"),
              ElementsAre("cat <<EOF user: $(whoami) EOF", "whoami"));
  EXPECT_THAT(Split("cat <<-END\n\tx\n\tEND\n"), ElementsAre("cat <<-END x END"));
}

TEST(BashSplit, HereStringIsNotAHereDocument) {
  EXPECT_THAT(Split("grep x <<< \"$(ls)\""), ElementsAre("grep x <<< \"$(ls)\"", "ls"));
}

TEST(BashSplit, UnterminatedQuoteMakesTheWholeCommandOneExactPart) {
  const BashCommandParts r = ParseBashCommand("git status && echo 'oops");
  EXPECT_TRUE(r.exact_only);
  EXPECT_THAT(r.parts, ElementsAre("git status && echo 'oops"));
  EXPECT_THAT(r.fragments, ElementsAre("git status"));
  EXPECT_FALSE(r.error.empty());
}

TEST(BashSplit, ConstructsTheSplitterCannotFollowFailClosed) {
  for (const char* command : {
           "echo \"unterminated",
           "echo $(unterminated",
           "echo `unterminated",
           "echo )",
           "f() { rm -rf /; }; f",
           "a=(1 2 3)",
           "case $x in a) rm -rf /;; esac",
           "( echo $(case x in a) rm -rf / ;; esac) )",
           "cat <<EOF\nno end",
           "echo ${x:-'}'}; rm -rf /; echo '",
           "echo $((a) | b)",
       }) {
    const BashCommandParts r = ParseBashCommand(command);
    EXPECT_TRUE(r.exact_only) << command;
    EXPECT_EQ(r.parts.size(), 1u) << command;
  }
}

TEST(BashSplit, EmptyCommandHasNoParts) {
  EXPECT_THAT(Split(""), IsEmpty());
  EXPECT_THAT(Split(" ;; \n & "), IsEmpty());
}

TEST(BashSplit, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "$(";
  const BashCommandParts r = ParseBashCommand(deep);
  EXPECT_TRUE(r.exact_only);
  EXPECT_THAT(r.error, ::testing::HasSubstr("nested"));

  std::string balanced;
  for (int i = 0; i < 10000; ++i) balanced += "$(";
  balanced += "x";
  for (int i = 0; i < 10000; ++i) balanced += ")";
  EXPECT_TRUE(ParseBashCommand(balanced).exact_only);

  std::string subshells(10000, '(');
  EXPECT_TRUE(ParseBashCommand(subshells).exact_only);
}

TEST(BashSplit, NestingUpToTheLimitStillSplits) {
  std::string command = "x";
  for (int i = 0; i < kMaxNestingDepth - 1; ++i) command = "echo $(" + command + ")";
  const BashCommandParts r = ParseBashCommand(command);
  EXPECT_FALSE(r.exact_only) << r.error;
  EXPECT_EQ(r.parts.size(), static_cast<size_t>(kMaxNestingDepth));
  EXPECT_EQ(r.parts.back(), "x");
}

TEST(BashSplit, VeryLongInputsAreHandled) {
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "a && ";
  many += "b";
  EXPECT_EQ(Split(many).size(), 100001u);

  // Keyword-only prefixes and brace runs are the inputs that would be quadratic if the
  // "command position" question were recomputed per character.
  std::string keywords;
  for (int i = 0; i < 100000; ++i) keywords += "! ";
  keywords += std::string(100000, '{');
  EXPECT_EQ(Split(keywords), std::vector<std::string>{std::string(100000, '{')});

  std::string quote = "echo '" + std::string(1 << 20, 'x');
  EXPECT_TRUE(ParseBashCommand(quote).exact_only);
}

TEST(BashSplit, AdversarialMixturesNeverCrash) {
  // A small deterministic generator over the characters that matter to the scanner.
  const std::string alphabet = "ab ;&|()$`'\"\\{}<>#\n=-*";
  uint32_t state = 12345;
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    const int len = round % 64;
    for (int i = 0; i < len; ++i) {
      state = state * 1103515245u + 12345u;
      input.push_back(alphabet[(state >> 16) % alphabet.size()]);
    }
    const BashCommandParts r = ParseBashCommand(input);
    for (const std::string& part : r.parts) EXPECT_FALSE(part.empty()) << input;
    if (r.exact_only) {
      EXPECT_LE(r.parts.size(), 1u) << input;
    }
  }
}

TEST(NormalizeCommandWhitespace, CollapsesOnlyUnquotedWhitespace) {
  EXPECT_EQ(NormalizeCommandWhitespace("  a \t\n b  'c  d' \"e  f\" g\\  h "),
            "a b 'c  d' \"e  f\" g\\  h");
  EXPECT_EQ(NormalizeCommandWhitespace("a 'unterminated   x"), "a 'unterminated   x");
}

TEST(StripLeadingAssignments, DropsNameValueWordsOnly) {
  EXPECT_EQ(StripLeadingAssignments("FOO=1 BAR=\"a b\" make x"), "make x");
  EXPECT_EQ(StripLeadingAssignments("make X=1"), "make X=1");
  EXPECT_EQ(StripLeadingAssignments("1X=2 y"), "1X=2 y");
  EXPECT_EQ(StripLeadingAssignments("X=1"), "");
}

}  // namespace
}  // namespace agent::daemon::policy

namespace agent::daemon::policy {
namespace {

TEST(BashSplit, TimeKeywordTakesItsPosixOption) {
  EXPECT_THAT(SplitCompoundCommand("time -p rm x"), ::testing::ElementsAre("rm x"));
  EXPECT_THAT(SplitCompoundCommand("time -p -- rm x"), ::testing::ElementsAre("rm x"));
  EXPECT_THAT(SplitCompoundCommand("ls -p x"), ::testing::ElementsAre("ls -p x"));
}

TEST(BashSplit, ArithmeticCommandIsOnePartWithItsSubstitutions) {
  EXPECT_THAT(SplitCompoundCommand("(( a[$(id)] + 1 )) && ls"),
              ::testing::ElementsAre("(( a[$(id)] + 1 ))", "id", "ls"));
  for (const char* command : {"(( 'a[$(id)]' ))", "((a) || b)", "(( x"}) {
    EXPECT_TRUE(ParseBashCommand(command).exact_only) << command;
  }
  EXPECT_THAT(SplitCompoundCommand("( (cd a) && make )"), ::testing::ElementsAre("cd a", "make"));
}

TEST(SubstitutionsIn, FindsTheCommandsOfQuotedCode) {
  EXPECT_THAT(SubstitutionsIn("a[$(id)]").value(), ::testing::ElementsAre("id"));
  EXPECT_THAT(SubstitutionsIn("a[`id`] ${x:-$(date)} $(( $(b) ))").value(),
              ::testing::ElementsAre("id", "date", "b"));
  EXPECT_THAT(SubstitutionsIn("plain 'text'").value(), ::testing::IsEmpty());
  EXPECT_FALSE(SubstitutionsIn("a[$(id]").has_value());
  EXPECT_FALSE(SubstitutionsIn(std::string("$(a\0b)", 6)).has_value());
}

}  // namespace
}  // namespace agent::daemon::policy
