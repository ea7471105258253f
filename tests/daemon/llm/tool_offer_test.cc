#include "daemon/llm/tool_offer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Json Schemas(const std::vector<std::string>& names, size_t description_bytes = 10) {
  Json out = Json::array();
  for (const std::string& n : names) {
    out.push_back(
        {{"type", "function"},
         {"function", {{"name", n}, {"description", std::string(description_bytes, 'd')}}}});
  }
  return out;
}

std::vector<std::string> Names(const Json& schemas) {
  std::vector<std::string> out;
  for (const Json& s : schemas) out.push_back(ToolName(s));
  return out;
}

TEST(ToolOffer, CoreToolsInRegistryOrderThenMcpToolsSortedByName) {
  ToolOffer offer;
  std::string notice;
  Json tools = offer.Arrange(
      Schemas({"read_file", "bash", "mcp__zed__b", "mcp__git__status", "mcp__zed__a"}), &notice);
  EXPECT_THAT(Names(tools),
              ElementsAre("read_file", "bash", "mcp__git__status", "mcp__zed__a", "mcp__zed__b"));
  EXPECT_EQ(notice, "");
  // A server that lists its tools in another order changes nothing.
  tools = offer.Arrange(
      Schemas({"read_file", "bash", "mcp__zed__a", "mcp__zed__b", "mcp__git__status"}), &notice);
  EXPECT_THAT(Names(tools),
              ElementsAre("read_file", "bash", "mcp__git__status", "mcp__zed__a", "mcp__zed__b"));
}

TEST(ToolOffer, ALateServerIsAddedAtTheEndAndAGoneToolLeaves) {
  ToolOffer offer;
  std::string notice;
  offer.Arrange(Schemas({"read_file", "mcp__zed__a"}), &notice);
  Json tools = offer.Arrange(Schemas({"read_file", "mcp__alpha__x", "mcp__zed__a"}), &notice);
  EXPECT_THAT(Names(tools), ElementsAre("read_file", "mcp__zed__a", "mcp__alpha__x"));
  tools = offer.Arrange(Schemas({"read_file", "mcp__alpha__x"}), &notice);
  EXPECT_THAT(Names(tools), ElementsAre("read_file", "mcp__alpha__x"));
  // A fresh offer (a restart) of the same tools sorts them as a first request does.
  ToolOffer fresh;
  EXPECT_THAT(Names(fresh.Arrange(Schemas({"read_file", "mcp__zed__a", "mcp__alpha__x"}), &notice)),
              ElementsAre("read_file", "mcp__alpha__x", "mcp__zed__a"));
}

TEST(ToolOffer, CappedByCountAndBytesWithANoticeOncePerChange) {
  ToolOffer offer(ToolOffer::Limits{.max_tools = 3, .max_bytes = 1 << 20});
  std::string notice;
  std::vector<std::string> many = {"read_file", "bash"};
  for (int i = 0; i < 20; ++i) many.push_back("mcp__big__t" + std::to_string(100 + i));
  Json tools = offer.Arrange(Schemas(many), &notice);
  EXPECT_THAT(Names(tools), ElementsAre("read_file", "bash", "mcp__big__t100"));
  EXPECT_THAT(notice, HasSubstr("19 tools are not offered to the model (at most 3 tools"));
  EXPECT_THAT(notice, HasSubstr("mcp__big__t101, mcp__big__t102"));
  EXPECT_THAT(notice, HasSubstr("and 9 more"));
  offer.Arrange(Schemas(many), &notice);
  EXPECT_EQ(notice, "");  // told once
  offer.Arrange(Schemas({"read_file", "bash"}), &notice);
  EXPECT_EQ(notice, "every tool is offered to the model again");

  ToolOffer by_bytes(ToolOffer::Limits{.max_tools = 100, .max_bytes = 1000});
  tools = by_bytes.Arrange(Schemas({"a", "mcp__s__one", "mcp__s__two"}, 400), &notice);
  // What is offered stays a prefix of the order: after one is left out, all later ones are.
  EXPECT_THAT(Names(tools), ElementsAre("a", "mcp__s__one"));
  EXPECT_THAT(notice, HasSubstr("1 tool is not offered"));
  EXPECT_THAT(notice, HasSubstr("mcp__s__two"));
}

}  // namespace
}  // namespace agent::daemon::llm
