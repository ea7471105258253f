#include <unistd.h>

#include <filesystem>

#include "daemon/subagents/agent_definition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::subagents {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const std::vector<AgentDefinition>& defs) {
  std::vector<std::string> out;
  for (const auto& d : defs) out.push_back(d.name);
  return out;
}

TEST(SubagentDefinitionTest, FrontMatterGivesNameDescriptionToolsAndModel) {
  auto d = ParseAgentDefinition(
      "---\nname: reviewer\ndescription: \"Reviews \x1b[31m diffs\"\ntools: [read_file, "
      "search, read_file]\nmodel: gpt-4o-mini\n---\nYou review.\n",
      "file-stem");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->name, "reviewer");
  EXPECT_EQ(d->description, "Reviews [31m diffs");
  EXPECT_FALSE(d->all_tools);
  EXPECT_THAT(d->tools, ElementsAre("read_file", "search"));
  EXPECT_EQ(d->model, "gpt-4o-mini");
  EXPECT_EQ(d->prompt, "You review.");
}

TEST(SubagentDefinitionTest, TheFileNameNamesItAndNoToolListMeansAll) {
  auto d = ParseAgentDefinition("---\ndescription: x\n---\nBody", "helper");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->name, "helper");
  EXPECT_TRUE(d->all_tools);
}

TEST(SubagentDefinitionTest, HostileFilesAreRefused) {
  EXPECT_FALSE(ParseAgentDefinition("no front matter", "a").ok());
  EXPECT_FALSE(ParseAgentDefinition("---\nname: a\nnever closed\n", "a").ok());
  EXPECT_FALSE(ParseAgentDefinition("---\nname: ../../etc\n---\nx", "a").ok());
  EXPECT_FALSE(ParseAgentDefinition("---\nname: Big\n---\nx", "a").ok());
  EXPECT_FALSE(ParseAgentDefinition("---\ntools: bash; rm -rf /\n---\nx", "a").ok());
  EXPECT_FALSE(ParseAgentDefinition("---\nmodel: a b\n---\nx", "a").ok());
  EXPECT_FALSE(ParseAgentDefinition("---\nname: a\n---\n  \n", "a").ok());  // empty prompt
  std::string many = "---\ntools: ";
  for (int i = 0; i < 70; ++i) many += "t" + std::to_string(i) + ",";
  EXPECT_FALSE(ParseAgentDefinition(many + "\n---\nx", "a").ok());
  // A description is one bounded line.
  auto d = ParseAgentDefinition("---\ndescription: " + std::string(1000, 'd') + "\n---\nx", "a");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->description.size(), kMaxAgentDescriptionBytes);
}

TEST(SubagentDefinitionTest, PolicyKeysCannotWidenAnything) {
  auto d = ParseAgentDefinition(
      "---\nname: a\nmode: yolo\npermissionMode: bypass\nallow: [\"bash(*)\"]\npolicy: "
      "auto\n---\nx",
      "a");
  ASSERT_TRUE(d.ok());
  // Nothing but the four known keys is kept; the mode and rules are the parent's.
  EXPECT_TRUE(d->all_tools);
  EXPECT_EQ(d->model, "");
}

TEST(SubagentDefinitionTest, ToolAllowListAndTheDepthLimit) {
  AgentDefinition all;  // no list: every tool but task
  EXPECT_TRUE(AgentMayUse(all, "bash", 1, 1));
  EXPECT_FALSE(AgentMayUse(all, "task", 1, 5));
  AgentDefinition listed;
  listed.all_tools = false;
  listed.tools = {"read_file", "task"};
  EXPECT_TRUE(AgentMayUse(listed, "read_file", 1, 1));
  EXPECT_FALSE(AgentMayUse(listed, "bash", 1, 1));
  EXPECT_FALSE(AgentMayUse(listed, "task", 1, 1));  // depth 1 with limit 1
  EXPECT_TRUE(AgentMayUse(listed, "task", 1, 2));
  EXPECT_FALSE(AgentMayUse(listed, "task", 2, 2));
}

// A child's question would reach a person who never started it: only a definition that lists
// ask_user gets it.
TEST(SubagentDefinitionTest, AskUserOnlyWhenTheDefinitionListsIt) {
  AgentDefinition all;
  EXPECT_FALSE(AgentMayUse(all, "ask_user", 1, 1));
  AgentDefinition listed;
  listed.all_tools = false;
  listed.tools = {"read_file", "ask_user"};
  EXPECT_TRUE(AgentMayUse(listed, "ask_user", 1, 1));
  listed.tools = {"read_file"};
  EXPECT_FALSE(AgentMayUse(listed, "ask_user", 1, 1));
}

TEST(SubagentDefinitionTest, ProjectFirstThenUserThenTheBuiltIn) {
  testing::TempDir dir;
  const std::string project = dir.Join("p");
  const std::string user = dir.Join("user-agents");
  testing::WriteFile(project + "/.agent/agents/zeta.md", "---\ndescription: z\n---\nZ");
  testing::WriteFile(project + "/.agent/agents/alpha.md", "---\ndescription: project\n---\nA");
  testing::WriteFile(user + "/alpha.md", "---\ndescription: user\n---\nA");
  testing::WriteFile(user + "/beta.md", "---\ndescription: b\n---\nB");
  testing::WriteFile(user + "/broken.md", "no front matter");
  testing::WriteFile(user + "/Bad Name.md", "---\n---\nB");
  std::vector<std::string> problems;
  auto defs = ListAgents(project, user, &problems);
  EXPECT_THAT(Names(defs), ElementsAre("alpha", "zeta", "beta", "general"));
  EXPECT_EQ(defs[0].description, "project");
  EXPECT_EQ(defs[3].scope, "builtin");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("broken.md"));

  auto found = FindAgent(project, user, "beta");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->prompt, "B");
  auto missing = FindAgent(project, user, "nope");
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("available: alpha, zeta"));
}

TEST(SubagentDefinitionTest, ProjectFilesAreNotReadThroughSymlinksOrWhenTooLarge) {
  testing::TempDir dir;
  const std::string project = dir.Join("p");
  testing::WriteFile(dir.Join("secret.md"), "---\ndescription: s\n---\nsecret");
  testing::WriteFile(project + "/.agent/agents/big.md",
                     "---\n---\n" + std::string(kMaxAgentFileBytes, 'x'));
  std::filesystem::create_directories(project + "/.agent/agents");
  ASSERT_EQ(::symlink(dir.Join("secret.md").c_str(), (project + "/.agent/agents/link.md").c_str()),
            0);
  std::vector<std::string> problems;
  auto defs = ListAgents(project, dir.Join("none"), &problems);
  EXPECT_THAT(Names(defs), ElementsAre("general"));
  EXPECT_EQ(problems.size(), 2u);
}

TEST(SubagentDefinitionTest, TheNumberOfFilesReadIsBounded) {
  testing::TempDir dir;
  const std::string project = dir.Join("p");
  for (int i = 0; i < 50; ++i) {
    testing::WriteFile(project + "/.agent/agents/a" + std::to_string(100 + i) + ".md",
                       "---\n---\nx");
  }
  EXPECT_EQ(ListAgents(project, dir.Join("none")).size(), kMaxAgentsPerDir + 1);
}

}  // namespace
}  // namespace agent::daemon::subagents
