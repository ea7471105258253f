// update_plan's checks, the plan as the session keeps it, and the /context report.
#include "daemon/context/context_report.h"
#include "daemon/context/session_context.h"
#include "daemon/tools/tool_registry.h"
#include "daemon/tools/update_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::context {
namespace {

using ::testing::HasSubstr;
namespace v1 = agent::v1;

TEST(UpdatePlanTest, NormalisesAndShowsNothingGated) {
  auto plan = tools::NormalizePlan(Json::parse(R"({"plan": [
      {"step": "read", "status": "completed"},
      {"step": "fix", "status": "in_progress"},
      {"step": "test", "status": "pending"}], "explanation": "found it"})"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  v1::Plan p = PlanFromJson(*plan);
  ASSERT_EQ(p.steps_size(), 3);
  EXPECT_EQ(p.steps(0).status(), v1::PLAN_STEP_STATUS_DONE);
  EXPECT_EQ(p.steps(1).status(), v1::PLAN_STEP_STATUS_IN_PROGRESS);
  EXPECT_EQ(p.steps(2).text(), "test");
  EXPECT_EQ(p.explanation(), "found it");
  auto tool = tools::NewUpdatePlanTool();
  EXPECT_FALSE(tool->Gated());
}

TEST(UpdatePlanTest, RefusesWhatTheModelMustFix) {
  for (const char* bad : {R"({})", R"({"plan": "x"})", R"({"plan": [{"status": "pending"}]})",
                          R"({"plan": [{"step": "a", "status": "later"}]})",
                          R"({"plan": [{"step": "a", "status": "in_progress"},
                                       {"step": "b", "status": "in_progress"}]})"}) {
    EXPECT_FALSE(tools::NormalizePlan(Json::parse(bad)).ok()) << bad;
    tools::ToolContext ctx;
    EXPECT_TRUE(tools::NewUpdatePlanTool()->Run(Json::parse(bad), ctx).is_error) << bad;
  }
  Json many = {{"plan", Json::array()}};
  for (int i = 0; i < 31; ++i) many["plan"].push_back({{"step", "s"}, {"status", "pending"}});
  EXPECT_FALSE(tools::NormalizePlan(many).ok());
}

TEST(SessionContextTest, PlanUsageAndInstructionsSurviveJson) {
  SessionContext c;
  Instructions in;
  in.files.push_back({"AGENTS.md", 120, false, "x"});
  c.SetPrompt(in, 1000, 1300);
  c.plan = PlanFromJson(Json::parse(R"({"plan": [{"step": "a", "status": "done"}]})"));
  c.usage.AddRequest(llm::Usage{10, 1, 0, 0}, 0);
  SessionContext back;
  back.LoadJson(Json::parse(c.ToJson().dump()));
  ASSERT_EQ(back.instructions.size(), 1u);
  EXPECT_EQ(back.instructions[0].path(), "AGENTS.md");
  EXPECT_EQ(back.instructions[0].bytes(), 120);
  EXPECT_EQ(back.base_chars, 1000);
  EXPECT_EQ(back.instruction_chars, 300);
  ASSERT_TRUE(back.plan.has_value());
  EXPECT_EQ(back.plan->steps(0).status(), v1::PLAN_STEP_STATUS_DONE);
  EXPECT_EQ(back.usage.session().prompt_tokens(), 10);
  EXPECT_EQ(UsageFromContextJson(c.ToJson()).requests(), 1);
}

TEST(InstructionsNoticeTest, NamesFilesAndSizes) {
  Instructions in;
  in.files.push_back({"AGENTS.md", 2048, false, "x"});
  in.files.push_back({"sub/CLAUDE.md", 10, true, "y"});
  in.cut_note = "[cut]";
  std::string n = InstructionsNotice(in);
  EXPECT_THAT(n, HasSubstr("AGENTS.md (2.0 KiB)"));
  EXPECT_THAT(n, HasSubstr("sub/CLAUDE.md (10 B, cut)"));
  EXPECT_THAT(n, HasSubstr("[cut]"));
  EXPECT_EQ(InstructionsNotice(Instructions()), "");
}

Json Messages() {
  return Json::parse(R"([{"role": "system", "content": "sys"},
                         {"role": "user", "content": "hello there"},
                         {"role": "assistant", "content": "hi"},
                         {"role": "user", "content": "more"}])");
}

TEST(ContextReportTest, EstimatesEachPart) {
  SessionContext c;
  c.base_chars = 400;
  c.instruction_chars = 800;
  Json tools = tools::ToolRegistry::CreateCore().Schemas();
  v1::ContextReport r = BuildContextReport(c, Messages(), tools, 128000);
  EXPECT_TRUE(r.estimated());
  EXPECT_EQ(r.system_tokens(), 100);
  EXPECT_EQ(r.instruction_tokens(), 200);
  EXPECT_EQ(r.tool_tokens(), EstimateTokens(static_cast<int64_t>(tools.dump().size())));
  EXPECT_GT(r.message_tokens(), 0);
  EXPECT_EQ(r.total_tokens(),
            r.system_tokens() + r.instruction_tokens() + r.tool_tokens() + r.message_tokens());
  EXPECT_EQ(r.context_tokens(), 128000);
}

TEST(ContextReportTest, UsesTheProviderCountWhenKnown) {
  SessionContext c;
  c.base_chars = 40;
  c.reported_tokens = 5000;
  c.reported_messages = 3;  // the last user message came after the request
  v1::ContextReport r = BuildContextReport(c, Messages(), Json::array(), 0);
  EXPECT_FALSE(r.estimated());
  EXPECT_EQ(r.total_tokens(),
            5000 + EstimateTokens(static_cast<int64_t>(
                       Json::parse(R"({"role":"user","content":"more"})").dump().size())));
}

}  // namespace
}  // namespace agent::daemon::context
