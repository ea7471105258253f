#include "daemon/context/usage.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::context {
namespace {

TEST(PriceTableTest, CostPerMillionWithCachedInput) {
  auto t = PriceTable::FromJson(
      Json::parse(R"({"m": {"input": 2.0, "output": 8.0, "cached_input": 0.5}})"));
  ASSERT_TRUE(t.ok());
  llm::Usage u{1'000'000, 500'000, 400'000};
  // 600k fresh at 2 + 400k cached at 0.5 + 500k out at 8.
  EXPECT_DOUBLE_EQ(t->Cost("m", u), 1.2 + 0.2 + 4.0);
  EXPECT_DOUBLE_EQ(t->Cost("other", u), 0.0);
}

TEST(PriceTableTest, CachedDefaultsToTheInputPrice) {
  auto t = PriceTable::FromJson(Json::parse(R"({"m": {"input": 1, "output": 0}})"));
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->Cost("m", llm::Usage{1'000'000, 0, 1'000'000, 0}), 1.0);
}

// Anthropic bills a cache write above the input price: the configured one, else 1.25x.
TEST(PriceTableTest, CacheWritesAtTheirOwnPriceDefaulting125PercentOfInput) {
  auto t = PriceTable::FromJson(Json::parse(
      R"({"a": {"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75},
          "b": {"input": 2, "output": 0}})"));
  ASSERT_TRUE(t.ok());
  // 1M prompt: 100k read at 0.3, 800k written at 3.75, 100k plain at 3; 10k out at 15.
  llm::Usage u{1'000'000, 10'000, 100'000, 800'000};
  EXPECT_DOUBLE_EQ(t->Cost("a", u), 0.03 + 3.0 + 0.3 + 0.15);
  // No cache_write price: 1.25 x input; no cached_input: the input price.
  EXPECT_DOUBLE_EQ(t->Cost("b", llm::Usage{1'000'000, 0, 0, 1'000'000}), 2.5);
  EXPECT_DOUBLE_EQ(t->Cost("b", u), 0.2 + 1.6 * 1.25 + 0.2);
  // Counts a provider got wrong never price below zero plain tokens.
  EXPECT_DOUBLE_EQ(t->Cost("b", llm::Usage{100, 0, 80, 80}), (80 * 2 + 20 * 2.5) / 1e6);
  EXPECT_FALSE(
      PriceTable::FromJson(Json::parse(R"({"m": {"input": 1, "output": 1, "cache_write": -2}})"))
          .ok());
}

TEST(PriceTableTest, MalformedTablesAreRefused) {
  EXPECT_FALSE(PriceTable::FromJson(Json::parse(R"([1])")).ok());
  EXPECT_FALSE(PriceTable::FromJson(Json::parse(R"({"m": 3})")).ok());
  EXPECT_FALSE(PriceTable::FromJson(Json::parse(R"({"m": {"input": 1}})")).ok());
  EXPECT_FALSE(PriceTable::FromJson(Json::parse(R"({"m": {"input": -1, "output": 1}})")).ok());
  EXPECT_FALSE(PriceTable::FromJson(Json::parse(R"({"m": {"input": "1", "output": 1}})")).ok());
  EXPECT_TRUE(PriceTable::FromJson(Json()).ok());
}

TEST(UsageMeterTest, TurnAndSessionTotals) {
  UsageMeter m;
  m.BeginTurn();
  m.AddRequest(llm::Usage{100, 10, 40, 0}, 0.5);
  m.AddRetry();
  m.AddRequest(std::nullopt, 0);  // a provider that sends no usage still made a request
  EXPECT_EQ(m.turn().prompt_tokens(), 100);
  EXPECT_EQ(m.turn().requests(), 2);
  EXPECT_EQ(m.turn().retries(), 1);
  m.BeginTurn();
  m.AddRequest(llm::Usage{200, 20, 0, 0}, 0.25);
  EXPECT_EQ(m.turn().prompt_tokens(), 200);
  EXPECT_EQ(m.turn().requests(), 1);
  EXPECT_EQ(m.session().prompt_tokens(), 300);
  EXPECT_EQ(m.session().completion_tokens(), 30);
  EXPECT_EQ(m.session().cached_tokens(), 40);
  m.AddRequest(llm::Usage{50, 5, 0, 30}, 0);
  EXPECT_EQ(m.turn().cache_write_tokens(), 30);
  EXPECT_EQ(m.session().cache_write_tokens(), 30);
  EXPECT_EQ(m.session().prompt_tokens(), 350);
  EXPECT_EQ(m.session().requests(), 4);
  EXPECT_EQ(m.session().retries(), 1);
  EXPECT_DOUBLE_EQ(m.session().cost_usd(), 0.75);
}

TEST(UsageMeterTest, SessionTotalsSurviveJson) {
  UsageMeter m;
  m.AddRequest(llm::Usage{100, 10, 40, 25}, 0.5);
  m.AddRetry();
  UsageMeter back;
  back.LoadJson(Json::parse(m.ToJson().dump()));
  EXPECT_EQ(back.session().SerializeAsString(), m.session().SerializeAsString());
  EXPECT_EQ(back.turn().requests(), 0);
}

TEST(UsageEventTest, CarriesCachedTokensAndCost) {
  agent::v1::Event e = UsageEvent(llm::Usage{10, 2, 8, 0}, 0.01);
  EXPECT_EQ(e.usage().cached_tokens(), 8);
  EXPECT_EQ(UsageEvent(llm::Usage{10, 2, 3, 5}, 0).usage().cache_write_tokens(), 5);
  EXPECT_EQ(e.usage().requests(), 1);
  EXPECT_DOUBLE_EQ(e.usage().cost_usd(), 0.01);
}

}  // namespace
}  // namespace agent::daemon::context
