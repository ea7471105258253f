#include "daemon/mcp/tool_shape.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::HasSubstr;

TEST(ToolShapeTest, ServerNames) {
  EXPECT_TRUE(ValidServerName("github"));
  EXPECT_TRUE(ValidServerName("my-db_2"));
  EXPECT_FALSE(ValidServerName(""));
  EXPECT_FALSE(ValidServerName("a__b"));  // would blur `mcp__a__*`
  EXPECT_FALSE(ValidServerName("a b"));
  EXPECT_FALSE(ValidServerName(std::string(33, 'a')));
}

TEST(ToolShapeTest, ModelNamesAreSanitisedAndCutDeterministically) {
  EXPECT_EQ(ModelToolName("fs", "read_file"), "mcp__fs__read_file");
  EXPECT_EQ(ModelToolName("fs", "read.file v2"), "mcp__fs__read_file_v2");
  const std::string long_a = ModelToolName("server", std::string(80, 'a') + "1");
  const std::string long_b = ModelToolName("server", std::string(80, 'a') + "2");
  EXPECT_EQ(long_a.size(), kMaxToolNameBytes);
  EXPECT_NE(long_a, long_b);
  EXPECT_EQ(long_a, ModelToolName("server", std::string(80, 'a') + "1"));
  EXPECT_EQ(long_a.rfind("mcp__server__aaa", 0), 0u);
}

TEST(ToolShapeTest, SchemasBecomeWhatProvidersAccept) {
  Json s = SanitizeSchema({{"$schema", "x"}, {"anyOf", Json::array()}, {"properties", {{"a", 1}}}});
  EXPECT_EQ(s["type"], "object");
  EXPECT_FALSE(s.contains("$schema"));
  EXPECT_FALSE(s.contains("anyOf"));
  EXPECT_EQ(s["properties"]["a"], 1);
  EXPECT_EQ(SanitizeSchema("nonsense"), Json({{"type", "object"}, {"properties", Json::object()}}));
  Json big = {{"type", "object"}, {"description", std::string(kMaxSchemaBytes + 1, 'x')}};
  EXPECT_FALSE(SanitizeSchema(big).contains("description"));
  Json f = FunctionSchema("mcp__a__b", std::string(5000, 'd'), Json::object());
  EXPECT_LE(f["function"]["description"].get<std::string>().size(), kMaxDescriptionBytes + 3);
}

TEST(ToolShapeTest, ResultsBecomeText) {
  RenderedResult r = RenderCallResult(
      {{"content",
        {{{"type", "text"}, {"text", "hello"}},
         {{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}},
         {{"type", "resource"}, {"resource", {{"uri", "file:///x"}, {"text", "body"}}}},
         {{"type", "resource_link"}, {"uri", "file:///y"}, {"name", "y"}}}}});
  EXPECT_FALSE(r.is_error);
  EXPECT_THAT(r.text, HasSubstr("hello\n[image content: image/png, 4 bytes"));
  EXPECT_THAT(r.text, HasSubstr("[resource file:///x ]\nbody"));
  EXPECT_THAT(r.text, HasSubstr("[resource link: file:///y (y)]"));
  EXPECT_EQ(r.text.find("AAAA"), std::string::npos);  // bytes are not sent to the model

  r = RenderCallResult({{"isError", true}, {"content", Json::array()}});
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.text, HasSubstr("failed"));
  r = RenderCallResult({{"content", Json::array()}, {"structuredContent", {{"n", 1}}}});
  EXPECT_EQ(r.text, R"({"n":1})");
}

}  // namespace
}  // namespace agent::daemon::mcp
