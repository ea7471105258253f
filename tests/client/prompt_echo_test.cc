#include "client/view/prompt_echo.h"

#include <string>

#include "gtest/gtest.h"

namespace agent::client {
namespace {

TEST(PromptEchoTest, AShortPromptIsEchoedWhole) {
  EXPECT_EQ(EchoedPrompt("fix the bug\nin main.cc"), "fix the bug\nin main.cc");
}

TEST(PromptEchoTest, AHugePromptShowsItsStartAndHowManyLinesMore) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
  std::string shown = EchoedPrompt(big, 3, 2000);
  EXPECT_EQ(shown, "line 0\nline 1\nline 2\n(… 19997 more lines)");
}

TEST(PromptEchoTest, OneLongLineIsCutByBytesAtACharacterBoundary) {
  std::string big(100, 'a');
  big += "é";  // two bytes: the cut at 101 falls inside it
  big += std::string(50, 'b');
  std::string shown = EchoedPrompt(big, 8, 101);
  EXPECT_EQ(shown, std::string(100, 'a') + " …\n(… 52 more bytes)");
}

TEST(PromptEchoTest, ACutInsideALineCountsTheRestOfTheLinesAfterIt) {
  std::string text = std::string(50, 'x') + "\nsecond\nthird";
  EXPECT_EQ(EchoedPrompt(text, 8, 10), std::string(10, 'x') + " …\n(… 2 more lines)");
}

}  // namespace
}  // namespace agent::client
