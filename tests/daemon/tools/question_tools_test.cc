// ask_user and present_plan: the arguments checked before anyone is asked, and what the model
// is told of each kind of answer.
#include <string>
#include <vector>

#include "daemon/tools/ask_user.h"
#include "daemon/tools/present_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::tools {
namespace {

using ::testing::HasSubstr;

struct Asked {
  int times = 0;
  std::string question;
  std::vector<std::string> options;
};

ToolContext Answering(Asked* asked, QuestionAnswer answer) {
  ToolContext ctx;
  ctx.ask_user = [asked, answer](const std::string& q, const std::vector<std::string>& o) {
    ++asked->times;
    asked->question = q;
    asked->options = o;
    return answer;
  };
  return ctx;
}

TEST(AskUserToolTest, TheAnswerIsTheResult) {
  std::unique_ptr<Tool> tool = NewAskUserTool();
  EXPECT_FALSE(tool->Gated());
  EXPECT_FALSE(tool->Concurrent());  // one question at a time
  Asked asked;
  ToolContext ctx = Answering(&asked, {QuestionAnswer::Kind::kAnswered, "postgres", "t"});
  ToolOutcome out =
      tool->Run({{"question", "Which db?"}, {"options", {"sqlite", "postgres"}}}, ctx);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content, "The user answered: postgres");
  EXPECT_EQ(asked.question, "Which db?");
  EXPECT_EQ(asked.options, (std::vector<std::string>{"sqlite", "postgres"}));
}

TEST(AskUserToolTest, NoAnswerAndACancelAreErrorsThatSaySo) {
  std::unique_ptr<Tool> tool = NewAskUserTool();
  Asked asked;
  ToolContext declined = Answering(&asked, {QuestionAnswer::Kind::kDeclined, "later", "t"});
  ToolOutcome out = tool->Run({{"question", "Which db?"}}, declined);
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("did not answer: later"));
  ToolContext cancelled = Answering(&asked, {QuestionAnswer::Kind::kCancelled, "", ""});
  EXPECT_THAT(tool->Run({{"question", "Which db?"}}, cancelled).content, HasSubstr("cancelled"));
}

TEST(AskUserToolTest, BadQuestionsAreRefusedBeforeAnyoneIsAsked) {
  std::unique_ptr<Tool> tool = NewAskUserTool();
  Asked asked;
  ToolContext ctx = Answering(&asked, {QuestionAnswer::Kind::kAnswered, "x", "t"});
  const Json bad[] = {
      {{"question", "  "}},
      {{"question", "q"}, {"options", {"only one"}}},
      {{"question", "q"}, {"options", {"1", "2", "3", "4", "5", "6", "7"}}},
      {{"question", "q"}, {"options", {"a", ""}}},
      {{"question", "q"}, {"options", {"a", 2}}},
      {{"question", "q"}, {"options", "a, b"}},
      {{"question", std::string(2001, 'q')}},
  };
  for (const Json& args : bad) EXPECT_TRUE(tool->Run(args, ctx).is_error) << args;
  EXPECT_EQ(asked.times, 0);
}

TEST(AskUserToolTest, WhereNobodyCanBeAskedTheModelDecides) {
  ToolContext ctx;  // no ask_user
  ToolOutcome out = NewAskUserTool()->Run({{"question", "Which db?"}}, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_THAT(out.content, HasSubstr("decide yourself"));
}

TEST(PresentPlanToolTest, ThePlanGoesToTheSessionWhichSaysWhatHappened) {
  std::unique_ptr<Tool> tool = NewPresentPlanTool();
  EXPECT_FALSE(tool->Gated());
  EXPECT_FALSE(tool->Concurrent());
  ToolContext ctx;
  std::string shown;
  ctx.present_plan = [&shown](const std::string& plan) {
    shown = plan;
    return ToolOutcome{"approved", false};
  };
  EXPECT_EQ(tool->Run({{"plan", "1. do it"}}, ctx).content, "approved");
  EXPECT_EQ(shown, "1. do it");
  EXPECT_TRUE(tool->Run({{"plan", ""}}, ctx).is_error);
  ToolContext not_planning;
  EXPECT_THAT(tool->Run({{"plan", "1. do it"}}, not_planning).content, HasSubstr("not planning"));
}

}  // namespace
}  // namespace agent::daemon::tools
