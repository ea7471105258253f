#include "client/input/slash_commands.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(SlashCommandsTest, KnownCommandsWithArguments) {
  auto c = ParseSlashCommand("/model  gpt-4.1 ");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, SlashCommand::kModel);
  EXPECT_EQ(c->argument, "gpt-4.1");
  c = ParseSlashCommand("/allow bash(make *)");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, SlashCommand::kAllow);
  EXPECT_EQ(c->argument, "bash(make *)");
  EXPECT_EQ(ParseSlashCommand("/HELP")->kind, SlashCommand::kHelp);
  EXPECT_EQ(ParseSlashCommand("/quit")->kind, SlashCommand::kDetach);
  EXPECT_EQ(ParseSlashCommand("/fork")->kind, SlashCommand::kFork);
  EXPECT_EQ(ParseSlashCommand("/clear")->kind, SlashCommand::kClear);
  EXPECT_EQ(ParseSlashCommand("/sessions")->kind, SlashCommand::kSessions);
  EXPECT_EQ(ParseSlashCommand("/compact")->kind, SlashCommand::kCompact);
}

TEST(SlashCommandsTest, PromptsAreNotCommands) {
  EXPECT_FALSE(ParseSlashCommand("explain /help").has_value());
  EXPECT_FALSE(ParseSlashCommand("/etc/hosts: what is in it?").has_value());
  EXPECT_FALSE(ParseSlashCommand("//model is a word").has_value());
  EXPECT_FALSE(ParseSlashCommand("/").has_value());
  EXPECT_FALSE(ParseSlashCommand("").has_value());
}

TEST(SlashCommandsTest, UnknownCommandsAreReportedNotSent) {
  auto c = ParseSlashCommand("/frobnicate now");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, SlashCommand::kUnknown);
  EXPECT_EQ(c->name, "frobnicate");
}

TEST(SlashCommandsTest, MissingArguments) {
  EXPECT_NE(MissingArgument(*ParseSlashCommand("/model")), "");
  EXPECT_NE(MissingArgument(*ParseSlashCommand("/allow")), "");
  EXPECT_EQ(MissingArgument(*ParseSlashCommand("/allow bash(ls)")), "");
  EXPECT_EQ(MissingArgument(*ParseSlashCommand("/help")), "");
}

TEST(SlashCommandsTest, HelpListsEveryCommand) {
  std::string help = SlashHelp();
  for (const char* c :
       {"/help", "/compact", "/clear", "/detach", "/sessions", "/model NAME", "/allow RULE",
        "/fork", "/status", "/context", "/undo", "/rewind", "/diff", "/trust", "/mcp"}) {
    EXPECT_NE(help.find(c), std::string::npos) << c;
  }
  // Every command the client runs itself is listed (the completion list is the same table).
  for (const auto& [name, what] : SlashCommandList()) {
    EXPECT_NE(ParseSlashCommand("/" + name)->kind, SlashCommand::kUnknown) << name;
    EXPECT_NE(help.find("/" + name), std::string::npos) << name;
  }
  EXPECT_EQ(ParseSlashCommand("/mcp")->kind, SlashCommand::kMcp);
  EXPECT_EQ(ParseSlashCommand("/last")->kind, SlashCommand::kLast);
  EXPECT_NE(help.find("Tab completes"), std::string::npos);
}

TEST(SlashCommandsTest, TheListForCompletionHasNoAliases) {
  std::vector<std::pair<std::string, std::string>> list = SlashCommandList();
  auto has = [&](const std::string& n) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return e.first == n; });
  };
  EXPECT_TRUE(has("help"));
  EXPECT_TRUE(has("detach"));
  EXPECT_FALSE(has("quit"));  // an alias: typed, not offered
}

}  // namespace
}  // namespace agent::client
