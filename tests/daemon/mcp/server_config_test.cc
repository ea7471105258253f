#include "daemon/mcp/server_config.h"

#include <filesystem>
#include <fstream>

#include "daemon/mcp/approvals.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(ServerConfigTest, ToolFiltersChooseWhatIsOfferedWithoutChangingTheIdentity) {
  Json settings = Json::parse(R"({"mcp_servers": {
    "gh": {"command": "gh-mcp", "enabled_tools": ["get_*", "search_code"],
           "disabled_tools": ["get_secret*"]},
    "all": {"command": "gh-mcp"},
    "bad": {"command": "x", "enabled_tools": "get_*"},
    "empty-name": {"command": "x", "disabled_tools": [""]}
  }})");
  ParsedServers p = ParseServers(settings, "user", "", "config.json");
  ASSERT_EQ(p.servers.size(), 2u);
  const ServerDef& all = p.servers[0];
  const ServerDef& gh = p.servers[1];
  ASSERT_EQ(gh.name, "gh");
  EXPECT_TRUE(gh.Offers("get_issue"));
  EXPECT_TRUE(gh.Offers("search_code"));
  EXPECT_FALSE(gh.Offers("search_code_more"));
  EXPECT_FALSE(gh.Offers("create_issue"));
  EXPECT_FALSE(gh.Offers("get_secret_value"));
  EXPECT_TRUE(all.Offers("create_issue"));
  ServerDef unfiltered = gh;
  unfiltered.has_enabled_tools = false;
  unfiltered.enabled_tools.clear();
  unfiltered.disabled_tools.clear();
  EXPECT_EQ(gh.Identity(), unfiltered.Identity());
  EXPECT_THAT(p.problems, ElementsAre(HasSubstr("\"enabled_tools\" is not an array"),
                                      HasSubstr("\"disabled_tools\" holds something")));
  // An empty allow-list offers nothing; many stars stay cheap.
  ServerDef none;
  none.has_enabled_tools = true;
  EXPECT_FALSE(none.Offers("anything"));
  ServerDef stars;
  stars.disabled_tools = {"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"};
  EXPECT_TRUE(stars.Offers(std::string(4000, 'a')));
}

TEST(ServerConfigTest, ParsesStdioAndHttpAndNamesTheProblems) {
  Json settings = Json::parse(R"({"mcp_servers": {
    "fs": {"command": "npx", "args": ["-y", "server fs", "it's"], "env": {"A": "1"},
           "start": "eager", "timeout_ms": 5000},
    "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
    "both": {"command": "x", "url": "http://y"},
    "a__b": {"command": "x"},
    "bad-args": {"command": "x", "args": "nope"},
    "bad-url": {"url": "file:///etc/passwd"}
  }})");
  ParsedServers p = ParseServers(settings, "user", "", "config.json");
  ASSERT_EQ(p.servers.size(), 2u);
  EXPECT_EQ(p.servers[0].name, "fs");
  EXPECT_TRUE(p.servers[0].eager);
  EXPECT_EQ(p.servers[0].timeout_ms, 5000);
  EXPECT_EQ(p.servers[0].Target(), R"(npx -y 'server fs' 'it'\''s')");
  EXPECT_TRUE(p.servers[1].is_http());
  EXPECT_EQ(p.servers[1].Target(), "https://example.com/mcp");
  EXPECT_EQ(p.problems.size(), 4u);
  EXPECT_THAT(p.problems[0], HasSubstr("a__b"));
}

TEST(ServerConfigTest, IdentityCoversWhatRuns) {
  ServerDef a;
  a.name = "x";
  a.command = "run";
  ServerDef b = a;
  EXPECT_EQ(a.Identity(), b.Identity());
  b.env.emplace_back("LD_PRELOAD", "/tmp/evil.so");
  EXPECT_NE(a.Identity(), b.Identity());
  b = a;
  b.args.push_back("--more");
  EXPECT_NE(a.Identity(), b.Identity());
}

class ProjectServersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Set("XDG_CONFIG_HOME", dir_.Join("config"));
    env_.Set("XDG_STATE_HOME", dir_.Join("state"));
    std::filesystem::create_directories(project_);
  }
  agent::testing::TempDir dir_;
  agent::testing::ScopedEnv env_;
  std::string project_ = dir_.Join("project");
};

TEST_F(ProjectServersTest, AProjectServerCannotTakeTheNameOfOneOfTheUsers) {
  // The user's rules (mcp__db__*) would otherwise allow the repository's server's tools.
  Write(dir_.Join("config/agent/config.json"),
        R"({"mcp_servers": {"db": {"command": "user-db"}, "gh": {"command": "gh-mcp"}}})");
  Write(project_ + "/.agent/settings.json",
        R"({"mcp_servers": {"db": {"command": "repo-db"}, "lint": {"command": "repo-lint"}}})");
  ParsedServers p = ServersFor(project_);
  ASSERT_EQ(p.servers.size(), 3u);
  EXPECT_EQ(p.servers[0].command, "user-db");
  EXPECT_EQ(p.servers[0].scope, "user");
  EXPECT_EQ(p.servers[1].name, "gh");
  EXPECT_EQ(p.servers[2].command, "repo-lint");
  EXPECT_EQ(p.servers[2].scope, "project");
  EXPECT_EQ(p.servers[2].project, project_);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_THAT(p.problems[0], HasSubstr("\"db\", which is the name of one of yours"));
}

TEST_F(ProjectServersTest, NamesDifferingOnlyByCaseOrTrailingPunctuationAreRefused) {
  Write(dir_.Join("config/agent/config.json"), R"({"mcp_servers": {"gh": {"command": "gh-mcp"}}})");
  Write(project_ + "/.agent/settings.json",
        R"({"mcp_servers": {"GH": {"command": "a"}, "gh-": {"command": "b"},
                            "ghx": {"command": "c"}}})");
  ParsedServers p = ServersFor(project_);
  ASSERT_EQ(p.servers.size(), 2u);
  EXPECT_EQ(p.servers[0].command, "gh-mcp");
  EXPECT_EQ(p.servers[1].name, "ghx");
  ASSERT_EQ(p.problems.size(), 2u);
  EXPECT_THAT(p.problems[0], HasSubstr("\"GH\", which differs from \"gh\" only by case"));
  EXPECT_THAT(p.problems[1], HasSubstr("\"gh-\", which differs from \"gh\""));
}

TEST_F(ProjectServersTest, ASymlinkedProjectSettingsFileIsNotFollowed) {
  Write(dir_.Join("elsewhere.json"), R"({"mcp_servers": {"db": {"command": "x"}}})");
  std::filesystem::create_directories(project_ + "/.agent");
  std::filesystem::create_symlink(dir_.Join("elsewhere.json"), project_ + "/.agent/settings.json");
  ParsedServers p = LoadProjectServers(project_);
  EXPECT_TRUE(p.servers.empty());
  ASSERT_EQ(p.problems.size(), 1u);
}

TEST_F(ProjectServersTest, AProjectServerRunsOnlyAfterApprovalOfThatExactDefinition) {
  Write(project_ + "/.agent/settings.json", R"({"mcp_servers": {"db": {"command": "repo-db"}}})");
  ServerDef def = LoadProjectServers(project_).servers.at(0);
  EXPECT_FALSE(IsApproved(def));
  ASSERT_TRUE(RecordApproval(def).ok());
  EXPECT_TRUE(IsApproved(def));
  // Recorded outside the repository.
  EXPECT_EQ(ApprovalsPath(), dir_.Join("state/agent/mcp-approvals.json"));
  EXPECT_TRUE(std::filesystem::exists(ApprovalsPath()));
  // The repository changes the command: asked again.
  Write(project_ + "/.agent/settings.json",
        R"({"mcp_servers": {"db": {"command": "repo-db", "args": ["--evil"]}}})");
  EXPECT_FALSE(IsApproved(LoadProjectServers(project_).servers.at(0)));
  // The same definition in another project is not approved either.
  ServerDef other = def;
  other.project = dir_.Join("other");
  EXPECT_FALSE(IsApproved(other));
  // User servers need no approval.
  ServerDef user = def;
  user.scope = "user";
  user.project.clear();
  EXPECT_TRUE(IsApproved(user));
}

}  // namespace
}  // namespace agent::daemon::mcp
