// CheckToolInput: the one reading of a call's arguments, for every core tool.
#include "daemon/tools/tool_input.h"

#include "daemon/tools/bash_request.h"
#include "daemon/tools/tool_registry.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::StatusIs;
using ::testing::HasSubstr;

const Json& Parameters(const Tool& tool) {
  static Json keep;  // Schema() returns a value: keep it alive for the reference
  keep = tool.Schema()["function"]["parameters"];
  return keep;
}

// A value of `type` and one of no type the schema could coerce to it.
Json Good(const std::string& type) {
  if (type == "string") return "x";
  if (type == "integer") return 3;
  if (type == "number") return 2.5;
  if (type == "boolean") return true;
  if (type == "array") return Json::array();
  return Json::object();
}
Json Bad(const std::string& type) { return type == "string" ? Json(Json::array()) : Json("x y"); }

TEST(ToolInputTest, EveryCoreToolTakesItsTypesAndRefusesOthersByName) {
  ToolRegistry registry = ToolRegistry::CreateCore();
  for (std::string_view name : registry.Names()) {
    const Tool& tool = *registry.Find(name);
    const Json params = Parameters(tool);
    Json minimal = Json::object();
    for (const Json& r : params.value("required", Json::array())) {
      minimal[r.get<std::string>()] = Good(params["properties"][r.get<std::string>()]["type"]);
    }
    ASSERT_TRUE(CheckToolInput(tool, minimal).ok()) << name;
    for (const auto& [prop, schema] : params["properties"].items()) {
      const std::string type = schema.value("type", "string");
      Json good = minimal;
      good[prop] = Good(type);
      absl::StatusOr<Json> checked = CheckToolInput(tool, good);
      ASSERT_TRUE(checked.ok()) << name << "." << prop << ": " << checked.status();
      EXPECT_EQ((*checked)[prop], good[prop]) << name << "." << prop;
      Json bad = minimal;
      bad[prop] = Bad(type);
      EXPECT_THAT(CheckToolInput(tool, bad),
                  StatusIs(absl::StatusCode::kInvalidArgument,
                           HasSubstr("argument \"" + prop + "\" must be")))
          << name << "." << prop;
    }
  }
}

TEST(ToolInputTest, CoercionsHappenHereOnceAndTheBashToolAndPolicyReadTheResult) {
  ToolRegistry registry = ToolRegistry::CreateCore();
  const Tool& bash = *registry.Find("bash");
  absl::StatusOr<Json> checked = CheckToolInput(
      bash,
      Json{{"command", "ls"}, {"escalate", "true"}, {"timeout_s", "30"}, {"background", "false"}});
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ((*checked)["escalate"], Json(true));
  EXPECT_EQ((*checked)["timeout_s"], Json(30));
  EXPECT_EQ((*checked)["background"], Json(false));
  absl::StatusOr<BashRequest> request = ReadBashRequest(*checked);
  ASSERT_TRUE(request.ok());
  EXPECT_TRUE(request->escalate);
  EXPECT_EQ(request->timeout_s, 30);
  // Only those coercions: "yes", 1 and "TRUE" are no booleans.
  for (const Json& v : {Json("yes"), Json(1), Json("TRUE"), Json("true ")}) {
    EXPECT_THAT(CheckToolInput(bash, Json{{"command", "ls"}, {"escalate", v}}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("bash: argument \"escalate\" must be a boolean")))
        << v.dump();
  }
  EXPECT_EQ((*CheckToolInput(bash, Json{{"command", "ls"}, {"timeout_s", 5.0}}))["timeout_s"],
            Json(5));
  EXPECT_FALSE(CheckToolInput(bash, Json{{"command", "ls"}, {"timeout_s", 5.5}}).ok());
}

TEST(ToolInputTest, WhatTheSchemaClosesOutIsDroppedAndNullIsAbsent) {
  ToolRegistry registry = ToolRegistry::CreateCore();
  absl::StatusOr<Json> checked = CheckToolInput(
      *registry.Find("bash"), Json{{"command", "ls"}, {"Escalate", true}, {"escalate", nullptr}});
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ(*checked, (Json{{"command", "ls"}}));
  EXPECT_THAT(CheckToolInput(*registry.Find("bash"), Json{{"command", nullptr}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bash: missing required argument \"command\"")));
}

TEST(ToolInputTest, AServersSchemaIsReadForTypesRequiredEnumsAndNesting) {
  const Json schema = Json::parse(R"({
    "type": "object",
    "properties": {
      "mode": {"type": "string", "enum": ["fast", "safe"]},
      "limit": {"type": ["integer", "null"]},
      "tags": {"type": "array", "items": {"type": "string"}},
      "opts": {"type": "object", "properties": {"dry": {"type": "boolean"}}, "required": ["dry"]}
    },
    "required": ["mode"]
  })");
  absl::StatusOr<Json> ok = CheckAgainstSchema(
      schema, Json{{"mode", "safe"}, {"limit", "4"}, {"opts", {{"dry", "false"}}}, {"more", 1}},
      "mcp__s__t");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)["limit"], Json(4));
  EXPECT_EQ((*ok)["opts"]["dry"], Json(false));
  EXPECT_EQ((*ok)["more"], Json(1));  // not closed out: the server may read it, the policy never
  EXPECT_THAT(CheckAgainstSchema(schema, Json{{"mode", "quick"}}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("argument \"mode\" must be one of \"fast\", \"safe\"")));
  EXPECT_THAT(CheckAgainstSchema(schema, Json{{"mode", "fast"}, {"tags", {"a", 2}}}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("argument \"tags[1]\" must be a string, got number")));
  EXPECT_THAT(CheckAgainstSchema(schema, Json{{"mode", "fast"}, {"opts", Json::object()}}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing required argument \"opts.dry\"")));
  // A schema that says nothing takes any object.
  EXPECT_TRUE(CheckAgainstSchema(Json::object(), Json{{"x", {1, 2}}}, "t").ok());
  EXPECT_FALSE(CheckAgainstSchema(Json::object(), Json::array(), "t").ok());
}

}  // namespace
}  // namespace agent::daemon::tools
