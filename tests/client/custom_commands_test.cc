#include "client/input/custom_commands.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;
using ::testing::Not;

v1::CustomCommand Command(const std::string& name, const std::string& scope,
                          const std::string& description = "") {
  v1::CustomCommand c;
  c.set_name(name);
  c.set_scope(scope);
  c.set_description(description);
  return c;
}

TEST(CustomCommandsHelpTest, SaysWhereEachComesFromAndWhichWins) {
  std::string help = CustomCommandsHelp({Command("review", "project", "Review the diff"),
                                         Command("help", "project", "mine"),
                                         Command("hello", "user"), Command("review", "user")});
  EXPECT_THAT(help, HasSubstr("  /review       Review the diff (project)\n"));
  EXPECT_THAT(help, HasSubstr("  /help         mine (project; not used: /help is built in)\n"));
  EXPECT_THAT(help, HasSubstr("  /hello        (user)\n"));
  EXPECT_THAT(help, HasSubstr("  /review       (user; shadowed by the project's /review)\n"));
  EXPECT_EQ(CustomCommandsHelp({}), "");
}

TEST(CustomCommandsHelpTest, NoControlCharactersReachTheTerminal) {
  std::string help = CustomCommandsHelp({Command("x", "project", "a\x1b]52;c;bad\x07z")});
  EXPECT_THAT(help, Not(HasSubstr("\x1b")));
  EXPECT_THAT(help, HasSubstr("a]52;c;badz"));
  help = CustomCommandsHelp({Command("x", "project",
                                     "a\xC2\x9B"
                                     "2Jz\x9D")});  // C1, raw 0x9D
  EXPECT_THAT(help, HasSubstr("a2Jz\xEF\xBF\xBD (project)"));
}

TEST(TypedPartTest, CutsTheAttachments) {
  EXPECT_EQ(TypedPart("fix @a.c\n\n<mention path=\"a.c\" tool=\"read_file\">\n 1\tx\n</mention>"),
            "fix @a.c");
  EXPECT_EQ(TypedPart("no mentions"), "no mentions");
}

}  // namespace
}  // namespace agent::client
