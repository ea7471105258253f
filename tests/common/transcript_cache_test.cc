// The counts a Transcript keeps as it changes (CharCount, the call ids for uniqueness) agree
// with counting from scratch after appends, a compaction and a fork.
#include <string>

#include "common/transcript.h"
#include "gtest/gtest.h"

namespace agent {
namespace {

Json Calls(const std::string& id) {
  return {
      {"role", "assistant"},
      {"content", "reading"},
      {"tool_calls",
       Json::array({{{"id", id},
                     {"type", "function"},
                     {"function", {{"name", "read_file"}, {"arguments", "{\"path\":\"a\"}"}}}}})}};
}

size_t Recounted(const Transcript& t) {
  absl::StatusOr<Transcript> fresh = Transcript::FromJson(t.messages());
  EXPECT_TRUE(fresh.ok());
  return fresh.ok() ? fresh->CharCount() : 0;
}

Transcript Steps(int n) {
  Transcript t;
  EXPECT_TRUE(t.AppendSystem("system ½").ok());
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(t.AppendUser("prompt " + std::to_string(i)).ok());
    EXPECT_TRUE(t.AppendAssistant(Calls("c" + std::to_string(i))).ok());
    EXPECT_TRUE(t.AppendToolResult("c" + std::to_string(i), "result → " + std::to_string(i)).ok());
    EXPECT_TRUE(t.AppendAssistant({{"role", "assistant"}, {"content", "done"}}).ok());
  }
  return t;
}

TEST(TranscriptCounts, CharCountFollowsAppends) {
  Transcript t;
  ASSERT_TRUE(t.AppendSystem("sys").ok());
  EXPECT_EQ(t.CharCount(), 3u);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(t.AppendUser("u").ok());
    ASSERT_TRUE(t.AppendAssistant(Calls("k" + std::to_string(i))).ok());
    ASSERT_TRUE(t.AppendToolResult("k" + std::to_string(i), "12345").ok());
    EXPECT_EQ(t.CharCount(), Recounted(t));
  }
  // Each step: "u" + "reading" + arguments + "read_file" + "12345".
  EXPECT_EQ(t.CharCount(), 3u + 5 * (1 + 7 + 12 + 9 + 5));
}

TEST(TranscriptCounts, AnIdUsedLongAgoIsStillADuplicate) {
  Transcript t = Steps(50);
  ASSERT_TRUE(t.AppendUser("again").ok());
  EXPECT_EQ(t.AppendAssistant(Calls("c0")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(t.AppendAssistant(Calls("c50")).ok());
}

TEST(TranscriptCounts, AfterCompactionTheCountsAreOfWhatIsLeft) {
  Transcript t = Steps(20);
  ASSERT_TRUE(t.ReplacePrefix(t.CutPoint(), "a summary").ok());
  EXPECT_EQ(t.CharCount(), Recounted(t));
  // The first call went with the prefix: its id is free again, a later one is not.
  ASSERT_TRUE(t.AppendUser("again").ok());
  EXPECT_EQ(t.AppendAssistant(Calls("c19")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(t.AppendAssistant(Calls("c0")).ok());
  EXPECT_EQ(t.CharCount(), Recounted(t));
}

TEST(TranscriptCounts, AfterAForkTheCountsAreOfThePrefix) {
  Transcript t = Steps(10);
  Transcript fork = t;
  fork.TruncateTo(3);  // system, user, the first call: sealed by the truncation
  EXPECT_EQ(fork.CharCount(), Recounted(fork));
  ASSERT_TRUE(fork.AppendUser("again").ok());
  EXPECT_EQ(fork.AppendAssistant(Calls("c0")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fork.AppendAssistant(Calls("c5")).ok());
  EXPECT_EQ(t.CharCount(), Recounted(t));  // the original is untouched
}

TEST(TranscriptCounts, LoadedFromAFileTheCountsAreThere) {
  Transcript t = Steps(5);
  absl::StatusOr<Transcript> loaded = Transcript::FromFileText(t.FileText());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->CharCount(), t.CharCount());
  ASSERT_TRUE(loaded->AppendUser("again").ok());
  EXPECT_EQ(loaded->AppendAssistant(Calls("c3")).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace agent
