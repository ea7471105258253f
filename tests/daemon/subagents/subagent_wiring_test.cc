// Subagents::ToolsFor over a real SessionManager: which tools a session of each kind gets.
#include <stdlib.h>

#include <filesystem>

#include "daemon/service/session_manager.h"
#include "daemon/subagents/subagents.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_model_client.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::subagents {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> Names(const tools::ToolRegistry& r) {
  std::vector<std::string> out;
  for (std::string_view n : r.Names()) out.emplace_back(n);
  return out;
}

class SubagentWiringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workdir_ = dir_.Join("project");
    std::filesystem::create_directories(workdir_);
    setenv("XDG_CONFIG_HOME", dir_.Join("config").c_str(), 1);
    setenv("XDG_STATE_HOME", dir_.Join("state").c_str(), 1);
    registry_ = tools::ToolRegistry::CreateCore();
    SessionDeps d;
    d.epoch = "test";
    d.tools = &registry_;
    auto script = std::make_shared<agent::testing::FakeScript>();
    d.make_model_client = [script] {
      return std::make_unique<agent::testing::FakeModelClient>(script);
    };
    manager_ = std::make_unique<SessionManager>(d);
    SubagentOptions o;
    o.user_agents_dir = dir_.Join("user-agents");
    subagents_ = std::make_unique<Subagents>(o);
    subagents_->set_sessions(manager_.get());
    base_ = std::make_shared<const tools::ToolRegistry>(tools::ToolRegistry::CreateCore());
  }
  void TearDown() override { manager_.reset(); }

  std::string Child(const std::string& parent, const std::string& agent) {
    SessionSettings s;
    s.child = SessionSettings::ChildOf{parent, agent, 1, {}};
    auto c = manager_->CreateChild(workdir_, std::move(s), "child");
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? (*c)->id() : "";
  }

  testing::TempDir dir_;
  std::string workdir_;
  tools::ToolRegistry registry_;
  std::unique_ptr<SessionManager> manager_;
  std::unique_ptr<Subagents> subagents_;
  std::shared_ptr<const tools::ToolRegistry> base_;
};

TEST_F(SubagentWiringTest, APersonsSessionGetsEveryToolAndTask) {
  agent::v1::CreateSessionRequest req;
  req.set_workdir(workdir_);
  auto s = manager_->Create(req);
  ASSERT_TRUE(s.ok());
  auto tools = subagents_->ToolsFor(base_, workdir_, (*s)->id());
  EXPECT_EQ(Names(*tools).back(), "task");
  EXPECT_EQ(tools->Names().size(), base_->Names().size() + 1);
}

TEST_F(SubagentWiringTest, AChildGetsItsDefinitionsToolsAndNeverTaskAtTheDepthLimit) {
  testing::WriteFile(workdir_ + "/.agent/agents/reader.md",
                     "---\ntools: read_file, search, task\n---\nRead.");
  const std::string reader = Child("p", "reader");
  EXPECT_THAT(Names(*subagents_->ToolsFor(base_, workdir_, reader)),
              ElementsAre("read_file", "search"));
  const std::string general = Child("p", "general");
  // Every tool but task, and but ask_user: a child's question would reach a person who did not
  // start it, so only a definition that lists it gets it.
  std::vector<std::string> general_tools = Names(*subagents_->ToolsFor(base_, workdir_, general));
  EXPECT_EQ(general_tools.size(), base_->Names().size() - 1);
  EXPECT_THAT(general_tools, Not(Contains("ask_user")));
  auto info = manager_->Find(reader);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ((*info)->Info().agent(), "reader");
  EXPECT_EQ((*info)->Info().depth(), 1);
}

TEST_F(SubagentWiringTest, AChildWhoseDefinitionIsGoneGetsNoTools) {
  const std::string path = workdir_ + "/.agent/agents/reader.md";
  testing::WriteFile(path, "---\ntools: read_file\n---\nRead.");
  const std::string reader = Child("p", "reader");
  EXPECT_THAT(Names(*subagents_->ToolsFor(base_, workdir_, reader)), ElementsAre("read_file"));
  std::filesystem::remove(path);
  EXPECT_THAT(Names(*subagents_->ToolsFor(base_, workdir_, reader)), IsEmpty());
}

TEST_F(SubagentWiringTest, AnUnknownSessionGetsNoTools) {
  EXPECT_THAT(Names(*subagents_->ToolsFor(base_, workdir_, "0123456789abcdef")), IsEmpty());
}

TEST_F(SubagentWiringTest, AModeSetOnTheParentReachesItsRunningChildrenAndTheirs) {
  agent::v1::CreateSessionRequest req;
  req.set_workdir(workdir_);
  req.set_policy(agent::v1::POLICY_MODE_YES);
  auto parent = manager_->Create(req);
  ASSERT_TRUE(parent.ok());
  auto child = manager_->Find(Child((*parent)->id(), "general"));
  auto grandchild = manager_->Find(Child("x", "general"));
  auto done = manager_->Find(Child((*parent)->id(), "general"));
  ASSERT_TRUE(child.ok() && grandchild.ok() && done.ok());
  ASSERT_TRUE((*child)->SetPolicy(agent::v1::POLICY_MODE_ASK, {}).ok());
  (*parent)->AddRunningChild(*child);  // takes the parent's mode of now
  EXPECT_EQ((*child)->Info().policy(), agent::v1::POLICY_MODE_YES);
  (*child)->AddRunningChild(*grandchild);
  (*parent)->AddRunningChild(*done);
  (*parent)->RemoveRunningChild(done->get());

  // A person who sees the turn go wrong stops every gated call, the children's too.
  ASSERT_TRUE((*parent)->SetPolicy(agent::v1::POLICY_MODE_READ_ONLY, {}).ok());
  EXPECT_EQ((*child)->Info().policy(), agent::v1::POLICY_MODE_READ_ONLY);
  EXPECT_EQ((*grandchild)->Info().policy(), agent::v1::POLICY_MODE_READ_ONLY);
  EXPECT_EQ((*done)->Info().policy(), agent::v1::POLICY_MODE_YES);  // its turn had ended
}

}  // namespace
}  // namespace agent::daemon::subagents
