#include "daemon/tools/tool_args.h"

#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::StatusIs;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ToolArgsTest, EmptyBlankOrNullArgumentsAreAnEmptyObject) {
  EXPECT_EQ(*ParseToolArguments(""), Json::object());
  EXPECT_EQ(*ParseToolArguments("  \n"), Json::object());
  EXPECT_EQ(*ParseToolArguments("null"), Json::object());
}

TEST(ToolArgsTest, ObjectIsParsed) {
  absl::StatusOr<Json> j = ParseToolArguments(R"({"path":"a.txt","limit":3})");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["path"], "a.txt");
}

TEST(ToolArgsTest, NotJsonNamesTheProblemWithAnExcerpt) {
  EXPECT_THAT(ParseToolArguments(R"({"path": "a.txt")"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("arguments are not valid JSON: {\"path\": \"a.txt\"")));
  std::string long_garbage = "{" + std::string(500, 'x');
  absl::StatusOr<Json> r = ParseToolArguments(long_garbage);
  ASSERT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_LT(r.status().message().size(), 150u);
  EXPECT_THAT(std::string(r.status().message()), EndsWith("…"));
}

TEST(ToolArgsTest, NonObjectIsRefused) {
  EXPECT_THAT(ParseToolArguments("[1,2]"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                    HasSubstr("must be a JSON object, got array")));
  EXPECT_THAT(ParseToolArguments("42"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ToolArgsTest, DoublyEncodedObjectIsUnwrapped) {
  absl::StatusOr<Json> j = ParseToolArguments(R"("{\"command\":\"ls\"}")");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["command"], "ls");
}

TEST(ToolArgsTest, RequireStringNamesTheFieldAndTheTool) {
  Json args = {{"path", 3}};
  EXPECT_THAT(RequireString(Json::object(), "path", "read_file"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "read_file: missing required argument \"path\""));
  EXPECT_THAT(RequireString(args, "path", "read_file"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("argument \"path\" must be a string, got number")));
  EXPECT_THAT(RequireString(Json{{"path", nullptr}}, "path", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing")));
  EXPECT_EQ(*RequireString(Json{{"path", "a"}}, "path"), "a");
}

TEST(ToolArgsTest, TheReadersCoerceNothing) {
  // Coercion happens once, in CheckToolInput (tool_input.h); a reader that coerced again
  // would be a second reading of the same call.
  EXPECT_EQ(OptionalInt(Json::object(), "limit")->has_value(), false);
  EXPECT_EQ(**OptionalInt(Json{{"limit", 5}}, "limit"), 5);
  EXPECT_EQ(**OptionalInt(Json{{"limit", uint64_t{7}}}, "limit"), 7);
  EXPECT_THAT(OptionalInt(Json{{"limit", uint64_t{1} << 63}}, "limit"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be an integer")));
  for (const Json& v : {Json(5.0), Json(" 7"), Json(5.5)}) {
    EXPECT_THAT(OptionalInt(Json{{"limit", v}}, "limit", "read_file"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be an integer")));
  }
  EXPECT_EQ(**OptionalBool(Json{{"replace_all", true}}, "replace_all"), true);
  for (const Json& v : {Json("false"), Json("true"), Json(1)}) {
    EXPECT_THAT(OptionalBool(Json{{"replace_all", v}}, "replace_all"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be a boolean")));
  }
  EXPECT_EQ(**OptionalString(Json{{"path", "p"}}, "path"), "p");
  EXPECT_FALSE(OptionalString(Json::object(), "path")->has_value());
}

}  // namespace
}  // namespace agent::daemon::tools
