#include "daemon/prompt/system_prompt.h"

#include "daemon/context/first_use.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

SystemPromptInputs Inputs(const TempDir& d) {
  SystemPromptInputs in;
  in.project_root = d.path();
  in.cwd = d.path();
  in.now = absl::FromUnixSeconds(1764547200);  // 2025-12-01 UTC
  return in;
}

TEST(SystemPromptTest, CarriesTheEnvironmentAndTheConventions) {
  TempDir d;
  BuiltSystemPrompt p = BuildSystemPrompt(Inputs(d));
  EXPECT_THAT(p.text, HasSubstr("Working directory: " + d.path()));
  EXPECT_THAT(p.text, HasSubstr("today: 2025-1"));
  EXPECT_THAT(p.text, HasSubstr("Not a git repository"));
  EXPECT_THAT(p.text, HasSubstr("edit_file"));
  EXPECT_THAT(p.text, HasSubstr("update_plan"));
  EXPECT_THAT(p.text, HasSubstr("non-interactively"));
  EXPECT_THAT(p.text, Not(HasSubstr("{environment}")));
  EXPECT_EQ(p.base_chars, p.text.size());  // no instruction files
  std::printf("built-in system prompt: %zu bytes\n", p.text.size());
  EXPECT_LT(p.text.size(), 2600u);  // compact: it goes with every request
}

TEST(SystemPromptTest, AppendAndReplaceFromConfig) {
  TempDir d;
  SystemPromptInputs in = Inputs(d);
  in.config.system_prompt_append = "Always answer in French.";
  EXPECT_THAT(BuildSystemPrompt(in).text, HasSubstr("\n\nAlways answer in French."));
  WriteFile(d.Join("mine.txt"), "My own prompt. {environment}\n");
  in.config.system_prompt_file = d.Join("mine.txt");
  BuiltSystemPrompt p = BuildSystemPrompt(in);
  EXPECT_THAT(p.text, StartsWith("My own prompt. - Working directory: "));
  EXPECT_THAT(p.text, HasSubstr("Always answer in French."));
  EXPECT_THAT(p.text, Not(HasSubstr("update_plan")));
  in.config.system_prompt_file = d.Join("missing.txt");
  p = BuildSystemPrompt(in);
  EXPECT_THAT(p.problem, HasSubstr("missing.txt"));
  EXPECT_THAT(p.text, HasSubstr("update_plan"));  // the built-in one stays
}

TEST(SystemPromptTest, InstructionsComeLast) {
  TempDir d;
  WriteFile(d.Join("AGENTS.md"), "Use tabs.\n");
  BuiltSystemPrompt p = BuildSystemPrompt(Inputs(d));
  ASSERT_EQ(p.instructions.files.size(), 1u);
  EXPECT_LT(p.base_chars, p.text.size());
  EXPECT_THAT(p.text.substr(p.base_chars),
              HasSubstr("<instructions path=\"AGENTS.md\">\nUse tabs.\n</instructions>"));
}

TEST(FirstUseTest, ShownOnceUntilTheFileChanges) {
  TempDir d;
  const std::string state = d.Join("seen.json");
  context::Instructions in;
  in.files.push_back({"AGENTS.md", 5, false, "hello"});
  EXPECT_TRUE(context::MarkInstructionsSeen(state, "/p", in));
  EXPECT_FALSE(context::MarkInstructionsSeen(state, "/p", in));
  EXPECT_TRUE(context::MarkInstructionsSeen(state, "/other", in));
  in.files[0].text = "hellO";
  EXPECT_TRUE(context::MarkInstructionsSeen(state, "/p", in));
  EXPECT_FALSE(context::MarkInstructionsSeen(state, "/p", context::Instructions()));
}

}  // namespace
}  // namespace agent::daemon
