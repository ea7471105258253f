#include "client/view/stdin_prompt.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::HasSubstr;

// An unlinked file holding `data`, read from its start (as `agent < file` gets it); the
// caller closes it.
int FileWith(const std::string& data) {
  char path[] = "/tmp/agent-stdin-test-XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::unlink(path);
  EXPECT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

TEST(StdinPromptTest, QuestionThenFencedInput) {
  EXPECT_EQ(PromptWithInput("why?", "a\nb\n"), "why?\n\n```\na\nb\n```\n");
  EXPECT_EQ(PromptWithInput("why?", "no newline"), "why?\n\n```\nno newline\n```\n");
  EXPECT_EQ(PromptWithInput("why?", ""), "why?");
  EXPECT_EQ(PromptWithInput("", "a\nb\nc\n"), "a\nb\nc\n");
}

TEST(StdinPromptTest, TheTitleIsThePersonsWordsNotTheFencedInput) {
  EXPECT_EQ(PromptTitle("summarize this diff", "diff --git a/x b/x\n"), "summarize this diff");
  EXPECT_EQ(PromptTitle("  fix it\nplease", "input"), "fix it");
  // No question: the input is the prompt, its first non-blank line the title.
  EXPECT_EQ(PromptTitle("", "\n\n  # Task: port the lexer\nmore\n"), "# Task: port the lexer");
  std::string long_line(100, 'x');
  EXPECT_EQ(PromptTitle(long_line, ""), std::string(kMaxTitleBytes, 'x'));
  std::string accents(61, 'a');
  for (int i = 0; i < 20; ++i) accents += "é";  // a cut inside "é" backs off to its start
  std::string t = PromptTitle(accents, "");
  EXPECT_LE(t.size(), kMaxTitleBytes);
  EXPECT_NE(static_cast<unsigned char>(t.back()), 0xC3);
}

TEST(StdinPromptTest, TheFenceIsLongerThanAnyBacktickRunInside) {
  std::string input = "```\nrm -rf /\n```\n````";
  EXPECT_EQ(PromptWithInput("q", input), "q\n\n`````\n" + input + "\n`````\n");
}

TEST(StdinPromptTest, ReadsEverythingUpToTheCap) {
  int fd = FileWith("line 1\nline 2\nline 3\n");
  auto text = ReadInput(fd, 100);
  ::close(fd);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "line 1\nline 2\nline 3\n");
}

TEST(StdinPromptTest, PastTheCapIsAClearError) {
  int fd = FileWith(std::string(101, 'x'));
  auto text = ReadInput(fd, 100);
  ::close(fd);
  ASSERT_TRUE(absl::IsResourceExhausted(text.status()));
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("more than 100 bytes"));
  int big = FileWith(std::string(kMaxStdinBytes - 10, 'y'));
  EXPECT_TRUE(ReadInput(big).ok());
  ::close(big);
}

TEST(StdinPromptTest, AStdinThatStaysOpenGetsAHintAndIsStillRead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  int hints = 0;
  // The hint is the only thing that writes: reading cannot end before it ran.
  auto text = ReadInput(
      fds[0], 100,
      [&] {
        ++hints;
        EXPECT_EQ(::write(fds[1], "late\n", 5), 5);
        ::close(fds[1]);
      },
      /*hint_after_ms=*/1);
  ::close(fds[0]);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "late\n");
  EXPECT_EQ(hints, 1);
  int fd = FileWith("at once");
  hints = 0;
  EXPECT_EQ(*ReadInput(fd, 100, [&] { ++hints; }), "at once");
  EXPECT_EQ(hints, 0);
  ::close(fd);
}

TEST(StdinPromptTest, BinaryInputIsRefused) {
  for (const std::string& data : {std::string("a\0b", 3), std::string("\xff\xfe")}) {
    int fd = FileWith(data);
    auto text = ReadInput(fd, 100);
    ::close(fd);
    EXPECT_TRUE(absl::IsInvalidArgument(text.status()));
  }
}

}  // namespace
}  // namespace agent::client
