#include "daemon/tools/tool_registry.h"

#include <cstdio>

#include "daemon/tools/core_tools.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::testing::ElementsAre;

TEST(ToolRegistryTest, CoreToolsInAStableOrder) {
  ToolRegistry r = ToolRegistry::CreateCore();
  EXPECT_THAT(r.Names(), ElementsAre("read_file", "list_dir", "find_files", "search", "write_file",
                                     "edit_file", "bash", "bash_job", "update_plan", "ask_user"));
  EXPECT_EQ(r.Find("nope"), nullptr);
  ASSERT_NE(r.Find("bash"), nullptr);
  EXPECT_EQ(r.Find("bash")->Name(), "bash");
}

TEST(ToolRegistryTest, WritingToolsAndBashAreGated) {
  ToolRegistry r = ToolRegistry::CreateCore();
  for (const char* gated : {"write_file", "edit_file", "bash"}) {
    EXPECT_TRUE(r.Find(gated)->Gated()) << gated;
    EXPECT_FALSE(r.IsReadOnly(gated)) << gated;
  }
  for (const char* ro :
       {"read_file", "list_dir", "find_files", "search", "bash_job", "update_plan"}) {
    EXPECT_FALSE(r.Find(ro)->Gated()) << ro;
    EXPECT_TRUE(r.IsReadOnly(ro)) << ro;
  }
  EXPECT_FALSE(r.IsReadOnly("unknown"));
}

TEST(ToolRegistryTest, SchemasArePreciseAndShort) {
  ToolRegistry r = ToolRegistry::CreateCore();
  Json schemas = r.Schemas();
  ASSERT_TRUE(schemas.is_array());
  ASSERT_EQ(schemas.size(), 10u);
  std::vector<std::string_view> names = r.Names();
  for (size_t i = 0; i < schemas.size(); ++i) {
    const Json& s = schemas[i];
    EXPECT_EQ(s["type"], "function");
    const Json& f = s["function"];
    EXPECT_EQ(f["name"], std::string(names[i]));
    EXPECT_LE(f["description"].get<std::string>().size(), 160u) << names[i];
    const Json& p = f["parameters"];
    EXPECT_EQ(p["type"], "object");
    EXPECT_EQ(p["additionalProperties"], false);
    ASSERT_TRUE(p["properties"].is_object());
    for (const Json& req : p.value("required", Json::array())) {
      EXPECT_TRUE(p["properties"].contains(req.get<std::string>())) << names[i] << " " << req;
    }
  }
  std::string dumped = schemas.dump();
  std::printf("core tool schemas: %zu bytes\n", dumped.size());
  // update_plan is about 500 of them, bash's escalate and justification about 150, bash_job and
  // bash's background about 300, ask_user about 400.
  EXPECT_LT(dumped.size(), 4100u);
}

TEST(ToolRegistryTest, AddReplacesAToolOfTheSameName) {
  ToolRegistry r = ToolRegistry::CreateCore();
  const Tool* before = r.Find("search");
  r.Add(NewSearchTool());
  EXPECT_NE(r.Find("search"), before);
  EXPECT_EQ(r.Names().size(), 10u);
  EXPECT_EQ(r.Names()[3], "search");
}

}  // namespace
}  // namespace agent::daemon::tools
