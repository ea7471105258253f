#include "absl/time/clock.h"
#include "daemon/subagents/child_prompt.h"
#include "daemon/subagents/task_result.h"
#include "daemon/subagents/task_tool.h"
#include "daemon/tools/tool_filter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::subagents {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
namespace v1 = agent::v1;

std::vector<std::string> Names(const tools::ToolRegistry& r) {
  std::vector<std::string> out;
  for (std::string_view n : r.Names()) out.emplace_back(n);
  return out;
}

TEST(SubagentToolsTest, FilterKeepsTheAllowedToolsInOrderAndAddsTask) {
  auto base = std::make_shared<const tools::ToolRegistry>(tools::ToolRegistry::CreateCore());
  AgentDefinition def;
  def.all_tools = false;
  def.tools = {"search", "read_file", "task"};
  auto filtered = tools::FilterTools(
      base, [&](std::string_view n) { return AgentMayUse(def, n, 1, 1); }, nullptr);
  EXPECT_THAT(Names(*filtered), ElementsAre("read_file", "search"));
  EXPECT_TRUE(filtered->IsReadOnly("read_file"));

  auto with_task = tools::FilterTools(
      base, [](std::string_view) { return true; },
      NewTaskTool({def}, [](const Json&, tools::ToolContext&) { return tools::ToolOutcome{}; }));
  EXPECT_EQ(Names(*with_task).back(), "task");
  EXPECT_EQ(with_task->Names().size(), base->Names().size() + 1);
  // Task calls of one reply run concurrently; the child's own calls are the gated ones.
  EXPECT_TRUE(with_task->IsReadOnly("task"));
  EXPECT_FALSE(with_task->Find("task")->Gated());
}

TEST(SubagentToolsTest, AFilteredRegistryOutlivesItsBase) {
  auto base = std::make_shared<const tools::ToolRegistry>(tools::ToolRegistry::CreateCore());
  auto filtered = tools::FilterTools(
      base, [](std::string_view n) { return n == "list_dir"; }, nullptr);
  base.reset();
  ASSERT_NE(filtered->Find("list_dir"), nullptr);
  EXPECT_EQ(filtered->Find("list_dir")->Schema()["function"]["name"], "list_dir");
}

TEST(SubagentToolsTest, TheTaskDescriptionListsTheAgentsBounded) {
  std::vector<AgentDefinition> agents;
  for (int i = 0; i < 100; ++i) {
    AgentDefinition a;
    a.name = "agent" + std::to_string(i);
    a.description = std::string(150, 'd');
    agents.push_back(a);
  }
  std::string list = AgentList(agents);
  EXPECT_LE(list.size(), kMaxAgentListBytes + 64);
  EXPECT_THAT(list, HasSubstr("- agent0: ddd"));
  EXPECT_THAT(list, HasSubstr("(more agents not listed)"));
  auto tool = NewTaskTool({agents[0]}, nullptr);
  const std::string desc = tool->Schema()["function"]["description"];
  EXPECT_THAT(desc, HasSubstr("- agent0:"));
}

TEST(SubagentToolsTest, ResultsAreCappedAndNameTheChild) {
  ChildEnd end{"abc123", "general", v1::TURN_OUTCOME_DONE, "short answer", ""};
  tools::ToolOutcome r = FormatTaskResult(end);
  EXPECT_FALSE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("short answer"));
  EXPECT_THAT(r.content, HasSubstr("abc123"));
  EXPECT_THAT(r.content, Not(HasSubstr("cut")));

  std::string big;
  for (int i = 0; i < 3000; ++i) big += "line " + std::to_string(i) + "\n";
  end.answer = big;
  r = FormatTaskResult(end, 4096);
  EXPECT_LT(r.content.size(), 4096u + 300);
  EXPECT_THAT(r.content, HasSubstr("answer cut at"));
  EXPECT_THAT(r.content, HasSubstr("agent attach abc123"));
  EXPECT_THAT(r.content, HasSubstr("line 0\n"));
}

TEST(SubagentToolsTest, ACancelledOrFailedChildIsAnError) {
  ChildEnd end{"abc", "general", v1::TURN_OUTCOME_CANCELLED, "", ""};
  tools::ToolOutcome r = FormatTaskResult(end);
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("Cancelled"));
  end.outcome = v1::TURN_OUTCOME_ERROR;
  end.error = "HTTP 500";
  r = FormatTaskResult(end);
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("HTTP 500"));
}

TEST(SubagentToolsTest, AChildsPromptIsItsDefinitionsWithTheEnvironmentAndNoTaskLine) {
  testing::TempDir dir;
  AgentDefinition general;
  BuiltSystemPrompt usual = BuildSystemPromptFor(dir.path(), "", absl::Now());
  ASSERT_THAT(usual.text, HasSubstr("\n- task "));
  BuiltSystemPrompt p = ChildSystemPrompt(general, dir.path(), "", absl::Now());
  EXPECT_THAT(p.text, Not(HasSubstr("\n- task ")));
  EXPECT_THAT(p.text, HasSubstr("Working as a subagent"));
  EXPECT_EQ(p.base_chars, p.text.size());

  AgentDefinition reviewer;
  reviewer.prompt = "You review.";
  p = ChildSystemPrompt(reviewer, dir.path(), "", absl::Now());
  EXPECT_EQ(p.text.rfind("You review.\n\n# Environment\n", 0), 0u);
  EXPECT_THAT(p.text, HasSubstr(dir.path()));
}

}  // namespace
}  // namespace agent::daemon::subagents
