#include "common/transcript_rule.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace agent {
namespace {

Json Call(const std::string& id) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", "bash"}, {"arguments", "{}"}}}};
}
Json Assistant(std::vector<std::string> ids) {
  Json calls = Json::array();
  for (const std::string& id : ids) calls.push_back(Call(id));
  return {{"role", "assistant"}, {"content", ""}, {"tool_calls", calls}};
}
Json Result(const std::string& id) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", "ok"}};
}
Json User(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

TEST(TranscriptRuleTest, EachCallAnsweredOnceAndAtOnce) {
  TranscriptRule rule;
  EXPECT_TRUE(rule.Add(User("hi")).empty());
  EXPECT_TRUE(rule.Add(Assistant({"a", "b"})).empty());
  EXPECT_TRUE(rule.Add(Result("b")).empty());  // in any order
  EXPECT_FALSE(rule.Finish(false).empty());    // "a" is still open
  EXPECT_TRUE(rule.Finish(true).empty());      // unless an open tail is allowed
  EXPECT_TRUE(rule.Add(Result("a")).empty());
  EXPECT_TRUE(rule.Finish(false).empty());
  EXPECT_EQ(rule.size(), 4u);
}

TEST(TranscriptRuleTest, WhatBreaksItIsNamedAndCheckChangesNothing) {
  TranscriptRule rule;
  rule.Add(Assistant({"a"}));
  EXPECT_FALSE(rule.Check(User("between")).empty());  // separates the call from its result
  EXPECT_FALSE(rule.Check(Result("zzz")).empty());    // answers no call
  EXPECT_EQ(rule.size(), 1u);
  rule.Add(Result("a"));
  EXPECT_FALSE(rule.Check(Result("a")).empty());       // answered twice
  EXPECT_FALSE(rule.Check(Assistant({"a"})).empty());  // an id used again
}

TEST(TranscriptRuleTest, ValidateMessagesAgreesWithTheIncrementalCheck) {
  Json good = Json::array({User("u"), Assistant({"x"}), Result("x"), User("v")});
  EXPECT_TRUE(ValidateMessages(good, false).empty());
  Json bad = Json::array({User("u"), Assistant({"x"}), User("v"), Result("x")});
  EXPECT_FALSE(ValidateMessages(bad, false).empty());
}

TEST(TranscriptRuleTest, ToolCallIdSaysWhatIsWrongWithAShape) {
  EXPECT_EQ(*ToolCallId(Call("c1")), "c1");
  EXPECT_FALSE(ToolCallId(Json{{"type", "function"}}).ok());
  EXPECT_FALSE(ToolCallId(Json("c1")).ok());
  EXPECT_TRUE(HasToolCalls(Assistant({"c"})));
  EXPECT_FALSE(HasToolCalls(Assistant({})));
  EXPECT_FALSE(HasToolCalls(User("u")));
}

}  // namespace
}  // namespace agent
