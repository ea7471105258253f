// The client's text for the plan, /status's additions, /context and --usage.
#include "client/commands/context_commands.h"
#include "client/text/plan_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace v1 = agent::v1;

TEST(PlanTextTest, OneLinePerStepWithItsState) {
  v1::Plan p;
  p.set_explanation("found it");
  auto add = [&](const char* text, v1::PlanStepStatus st) {
    v1::PlanStep* s = p.add_steps();
    s->set_text(text);
    s->set_status(st);
  };
  add("read", v1::PLAN_STEP_STATUS_DONE);
  add("fix", v1::PLAN_STEP_STATUS_IN_PROGRESS);
  add("test\x1b[2J\rnow\xC2\x9B"
      "2J",
      v1::PLAN_STEP_STATUS_PENDING);  // U+009B: CSI
  std::string t = PlanText(p);
  EXPECT_EQ(t, "plan: found it\n  [x] read\n  [>] fix\n  [ ] test now2J\n");
  EXPECT_EQ(PlanText(v1::Plan()), "");
}

TEST(UsageTextTest, TokensRequestsRetriesAndCost) {
  v1::Usage u;
  u.set_prompt_tokens(5000);
  u.set_cached_tokens(1500);
  u.set_completion_tokens(350);
  u.set_requests(4);
  u.set_retries(1);
  u.set_cost_usd(7.15);
  EXPECT_EQ(UsageText(u), "5,000 in (1,500 cached), 350 out, 4 requests, 1 retry, $7.15");
  u.set_cache_write_tokens(2500);
  EXPECT_EQ(UsageText(u),
            "5,000 in (1,500 cached, 2,500 written to cache), 350 out, 4 requests, 1 retry, "
            "$7.15");
  v1::Usage none;
  none.set_requests(1);
  EXPECT_EQ(UsageText(none), "0 in, 0 out, 1 request");
}

TEST(InstructionsTextTest, PathsSizesAndCuts) {
  v1::GetSessionResponse s;
  EXPECT_EQ(InstructionsText(s), "instructions: none");
  auto* f = s.add_instructions();
  f->set_path("AGENTS.md");
  f->set_bytes(2048);
  f = s.add_instructions();
  f->set_path("sub/CLAUDE.md");
  f->set_bytes(30);
  f->set_truncated(true);
  EXPECT_EQ(InstructionsText(s), "instructions: AGENTS.md (2.0 KiB), sub/CLAUDE.md (30 B, cut)");
  s.mutable_instructions(1)->set_path(
      "a\x1b]0;t\x07\n\xC2\x9B"
      "2J/AGENTS.md");
  EXPECT_EQ(InstructionsText(s),
            "instructions: AGENTS.md (2.0 KiB), a\\x1b]0;t\\x07 \\u009b2J/AGENTS.md (30 B, cut)");
}

TEST(ContextTextTest, PartsAndTheWindow) {
  v1::ContextReport r;
  r.set_system_tokens(400);
  r.set_instruction_tokens(1000);
  r.set_tool_tokens(600);
  r.set_message_tokens(8000);
  r.set_total_tokens(10000);
  r.set_context_tokens(100000);
  std::string t = ContextText(r);
  EXPECT_THAT(t, HasSubstr("instructions"));
  EXPECT_THAT(t, HasSubstr("10,000"));
  EXPECT_THAT(t, HasSubstr("10.0%"));
  EXPECT_THAT(t, HasSubstr("as the provider counted"));
  r.set_context_tokens(0);
  r.set_estimated(true);
  t = ContextText(r);
  EXPECT_THAT(t, HasSubstr("AGENT_CONTEXT_TOKENS"));
  EXPECT_THAT(t, Not(HasSubstr("%")));
}

}  // namespace
}  // namespace agent::client
