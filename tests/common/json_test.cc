#include "common/json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"

namespace agent {
namespace {

using ::agent::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ParseJson, KeepsNumberKindsAndTheLastOfARepeatedKey) {
  auto j = ParseJson(R"({"u": 7, "i": -7, "big": 18446744073709551615, "f": 0.1, "k": 1, "k": 2})");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_TRUE((*j)["u"].is_number_unsigned());
  EXPECT_TRUE((*j)["i"].is_number_integer() && !(*j)["i"].is_number_unsigned());
  EXPECT_EQ((*j)["big"].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ((*j)["f"].get<double>(), 0.1);  // rounded as strtod does
  EXPECT_EQ((*j)["k"], 2);
  EXPECT_EQ(*j, Json::parse(R"({"u":7,"i":-7,"big":18446744073709551615,"f":0.1,"k":2})"));
}

TEST(ParseJson, ReadsStringsWithEscapesNulAndSurrogatePairs) {
  auto j = ParseJson(R"(["a\u0000b", "\ud83d\ude00", "é\n\"", {"nested": [[], {}]}])");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)[0].get<std::string>(), std::string("a\0b", 3));
  EXPECT_EQ((*j)[1], "\xF0\x9F\x98\x80");
  EXPECT_EQ((*j)[2], "é\n\"");
  EXPECT_EQ(DumpJson((*j)[3]), R"({"nested":[[],{}]})");
}

TEST(ParseJson, ARawNulIsNotTheEndOfTheInput) {
  // nlohmann's reader stops at a NUL byte: a value followed by one and anything else must still
  // be refused (a damaged session file, a journal line).
  EXPECT_THAT(ParseJson(std::string_view("{}\0junk", 7)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at byte 3")));
  EXPECT_THAT(ParseJson(std::string_view("[1]\0", 4)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ParseJson, RefusesInvalidJsonAndSaysWhere) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "1 2", "nul", "\"\t\"", "[\"\xff\"]",
                          "\"\\ud800\"", "1e400", "{}x"}) {
    EXPECT_THAT(ParseJson(bad), StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(ParseJson("\"\\udc00\""),
              StatusIs(absl::StatusCode::kInvalidArgument));  // a lone low surrogate
  EXPECT_THAT(std::string(ParseJson("[1, 2, }").status().message()), HasSubstr("at byte"));
}

TEST(FindJsonSyntaxError, NamesTheOffendingByteAndTheProblem) {
  const auto error = FindJsonSyntaxError("[1, 2, }");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->offset, 7u);  // the '}'
  EXPECT_THAT(error->problem, ::testing::StartsWith("syntax error while parsing value"));
  EXPECT_EQ(ParseJson("[1, 2, }").status().message(), "not valid JSON (at byte 8)");
  const auto cut = FindJsonSyntaxError("{\"a\": ");
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->offset, 6u);  // the end of the text
  EXPECT_FALSE(FindJsonSyntaxError(" {\"a\": [1, null]} ").has_value());
}

TEST(ParseJson, SkipsAByteOrderMarkAndSurvivesDeepNesting) {
  auto j = ParseJson("\xEF\xBB\xBF{\"a\":1}");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["a"], 1);
  const int depth = 100000;
  auto deep = ParseJson(std::string(depth, '[') + std::string(depth, ']'));
  ASSERT_TRUE(deep.ok()) << deep.status();
  EXPECT_TRUE(deep->is_array());
}

}  // namespace
}  // namespace agent
