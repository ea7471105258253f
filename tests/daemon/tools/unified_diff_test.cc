#include "daemon/tools/unified_diff.h"

#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::testing::HasSubstr;

// Applies a unified diff to `old_text` (a strict little patch(1)), to check diffs round-trip.
std::string Apply(const std::string& old_text, const std::string& diff) {
  std::vector<std::string> old_lines;
  for (size_t pos = 0; pos < old_text.size();) {
    size_t nl = old_text.find('\n', pos);
    size_t end = nl == std::string::npos ? old_text.size() : nl + 1;
    old_lines.push_back(old_text.substr(pos, end - pos));
    pos = end;
  }
  std::vector<std::string> lines = absl::StrSplit(diff, '\n');
  std::string out;
  size_t next_old = 0;  // index of the first old line not yet used
  char prev = 0;
  for (size_t i = 2; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty()) continue;
    if (l[0] == '@') {
      std::string range = l.substr(4, l.find(' ', 4) - 4);  // "l,n"
      int old_start = 0, count = 0;
      EXPECT_TRUE(absl::SimpleAtoi(range.substr(0, range.find(',')), &old_start)) << l;
      EXPECT_TRUE(absl::SimpleAtoi(range.substr(range.find(',') + 1), &count)) << l;
      size_t first = count == 0 ? old_start : old_start - 1;
      EXPECT_GE(first, next_old) << "hunks overlap or go backwards";
      for (; next_old < first && next_old < old_lines.size(); ++next_old)
        out += old_lines[next_old];
      prev = '@';
      continue;
    }
    if (l[0] == '\\') {
      if (prev == ' ' || prev == '+') {
        EXPECT_EQ(out.back(), '\n');
        out.pop_back();
      }
      continue;
    }
    std::string text = l.substr(1) + "\n";
    if (l[0] == ' ' || l[0] == '-') {
      EXPECT_LT(next_old, old_lines.size());
      if (next_old < old_lines.size()) {
        std::string expect = old_lines[next_old];
        if (expect.back() != '\n') expect += "\n";
        EXPECT_EQ(text, expect) << "context or deletion does not match the old text";
      }
      ++next_old;
    }
    if (l[0] == ' ' || l[0] == '+') out += text;
    prev = l[0];
  }
  for (; next_old < old_lines.size(); ++next_old) out += old_lines[next_old];
  return out;
}

TEST(UnifiedDiffTest, OneChangedLineWithContext) {
  EXPECT_EQ(UnifiedDiff("a\nb\nc\n", "a\nB\nc\n", "f.txt"),
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
}

TEST(UnifiedDiffTest, IdenticalTextsGiveNothing) { EXPECT_EQ(UnifiedDiff("x\n", "x\n", "f"), ""); }

TEST(UnifiedDiffTest, NewFileIsAllInsertions) {
  EXPECT_EQ(UnifiedDiff("", "x\ny\n", "n.txt"),
            "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
}

TEST(UnifiedDiffTest, MissingFinalNewlineIsMarked) {
  EXPECT_EQ(UnifiedDiff("a", "b", "f"),
            "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n"
            "\\ No newline at end of file\n");
}

TEST(UnifiedDiffTest, ContextIsTrimmedToThreeLines) {
  std::string old_text, new_text;
  for (int i = 1; i <= 20; ++i) {
    old_text += std::to_string(i) + "\n";
    new_text += (i == 10 ? std::string("ten") : std::to_string(i)) + "\n";
  }
  EXPECT_EQ(UnifiedDiff(old_text, new_text, "n"),
            "--- a/n\n+++ b/n\n@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n");
}

TEST(UnifiedDiffTest, DistantChangesMakeSeparateHunksAndCloseOnesMerge) {
  std::string old_text, far_text, near_text;
  for (int i = 1; i <= 30; ++i) {
    old_text += std::to_string(i) + "\n";
    far_text += (i == 3 || i == 25 ? "x" : std::to_string(i)) + std::string("\n");
    near_text += (i == 10 || i == 15 ? "x" : std::to_string(i)) + std::string("\n");
  }
  std::string far = UnifiedDiff(old_text, far_text, "f");
  EXPECT_THAT(far, HasSubstr("@@ -1,6 +1,6 @@"));
  EXPECT_THAT(far, HasSubstr("@@ -22,7 +22,7 @@"));
  std::string near = UnifiedDiff(old_text, near_text, "f");
  EXPECT_THAT(near, HasSubstr("@@ -7,12 +7,12 @@"));
  EXPECT_EQ(near.find("@@ -", near.find("@@ -7") + 1), std::string::npos) << near;
}

TEST(UnifiedDiffTest, RandomEditsRoundTrip) {
  std::mt19937 rng(12345);
  const char* alphabet[] = {"a\n", "b\n", "c\n", "d\n", "e"};
  for (int round = 0; round < 300; ++round) {
    std::string a, b;
    int na = rng() % 12, nb = rng() % 12;
    for (int i = 0; i < na; ++i) a += alphabet[rng() % 4];
    for (int i = 0; i < nb; ++i) b += alphabet[rng() % 4];
    if (rng() % 3 == 0) a += alphabet[4];
    if (rng() % 3 == 0) b += alphabet[4];
    std::string diff = UnifiedDiff(a, b, "r", static_cast<int>(rng() % 4));
    if (a == b) {
      EXPECT_EQ(diff, "");
      continue;
    }
    EXPECT_EQ(Apply(a, diff), b) << "old:\n" << a << "\nnew:\n" << b << "\ndiff:\n" << diff;
    DiffStat stat = ComputeDiffStat(a, b);
    EXPECT_GE(stat.added + stat.removed, 1);
  }
}

TEST(UnifiedDiffTest, HugeUnrelatedFilesFallBackToAWholeReplacementQuickly) {
  std::string a, b;
  for (int i = 0; i < 30000; ++i) {
    a += "old " + std::to_string(i) + "\n";
    b += "new " + std::to_string(i) + "\n";
  }
  auto start = std::chrono::steady_clock::now();
  std::string diff = UnifiedDiff(a, b, "big");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(2));
  EXPECT_THAT(diff, HasSubstr("@@ -1,30000 +1,30000 @@"));
  EXPECT_EQ(Apply(a, diff), b);
}

TEST(UnifiedDiffTest, DiffStatCountsLines) {
  DiffStat s = ComputeDiffStat("a\nb\nc\n", "a\nx\ny\nc\n");
  EXPECT_EQ(s.added, 2);
  EXPECT_EQ(s.removed, 1);
}

}  // namespace
}  // namespace agent::daemon::tools
