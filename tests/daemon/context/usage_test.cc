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
  EXPECT_DOUBLE_EQ(t->Cost("m", llm::Usage{1'000'000, 0, 1'000'000}), 1.0);
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
  m.AddRequest(llm::Usage{100, 10, 40}, 0.5);
  m.AddRetry();
  m.AddRequest(std::nullopt, 0);  // a provider that sends no usage still made a request
  EXPECT_EQ(m.turn().prompt_tokens(), 100);
  EXPECT_EQ(m.turn().requests(), 2);
  EXPECT_EQ(m.turn().retries(), 1);
  m.BeginTurn();
  m.AddRequest(llm::Usage{200, 20, 0}, 0.25);
  EXPECT_EQ(m.turn().prompt_tokens(), 200);
  EXPECT_EQ(m.turn().requests(), 1);
  EXPECT_EQ(m.session().prompt_tokens(), 300);
  EXPECT_EQ(m.session().completion_tokens(), 30);
  EXPECT_EQ(m.session().cached_tokens(), 40);
  EXPECT_EQ(m.session().requests(), 3);
  EXPECT_EQ(m.session().retries(), 1);
  EXPECT_DOUBLE_EQ(m.session().cost_usd(), 0.75);
}

TEST(UsageMeterTest, SessionTotalsSurviveJson) {
  UsageMeter m;
  m.AddRequest(llm::Usage{100, 10, 40}, 0.5);
  m.AddRetry();
  UsageMeter back;
  back.LoadJson(Json::parse(m.ToJson().dump()));
  EXPECT_EQ(back.session().SerializeAsString(), m.session().SerializeAsString());
  EXPECT_EQ(back.turn().requests(), 0);
}

TEST(UsageEventTest, CarriesCachedTokensAndCost) {
  agent::v1::Event e = UsageEvent(llm::Usage{10, 2, 8}, 0.01);
  EXPECT_EQ(e.usage().cached_tokens(), 8);
  EXPECT_EQ(e.usage().requests(), 1);
  EXPECT_DOUBLE_EQ(e.usage().cost_usd(), 0.01);
}

}  // namespace
}  // namespace agent::daemon::context
