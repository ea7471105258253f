#include "daemon/tools/unified_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {
namespace {

// Myers costs O((N+M)·D) time and O(D²) memory; past this budget of (N+M)·D steps the
// middle is shown as replaced wholesale.
constexpr int64_t kMaxDiffWork = 20'000'000;
constexpr int kMaxEditDistance = 1000;

// Lines keep their '\n', so "x" at the end of a file differs from "x\n".
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

enum class Op : char { kEqual, kDelete, kInsert };

struct Edit {
  Op op;
  int old_index;  // valid for kEqual and kDelete
  int new_index;  // valid for kEqual and kInsert
};

// Myers' greedy algorithm on a[lo_a, hi_a) vs b[lo_b, hi_b); appends the edit script.
// Returns false (appending nothing) when the edit distance exceeds max_d.
bool MyersDiff(const std::vector<std::string_view>& a, int lo_a, int hi_a,
               const std::vector<std::string_view>& b, int lo_b, int hi_b, int max_d,
               std::vector<Edit>* out) {
  const int n = hi_a - lo_a;
  const int m = hi_b - lo_b;
  const int offset = max_d + 1;
  std::vector<int> v(2 * static_cast<size_t>(max_d) + 3, 0);
  // trace[d][k + d] is v[k] after round d, for the backtrack; O(D²) ints in all.
  std::vector<std::vector<int>> trace;
  int found_d = -1;
  for (int d = 0; d <= max_d && found_d < 0; ++d) {
    for (int k = -d; k <= d; k += 2) {
      int x;
      if (k == -d || (k != d && v[k - 1 + offset] < v[k + 1 + offset])) {
        x = v[k + 1 + offset];  // step down: insertion
      } else {
        x = v[k - 1 + offset] + 1;  // step right: deletion
      }
      int y = x - k;
      while (x < n && y < m && a[lo_a + x] == b[lo_b + y]) {
        ++x;
        ++y;
      }
      v[k + offset] = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
    trace.emplace_back(v.begin() + (offset - d), v.begin() + (offset + d + 1));
  }
  if (found_d < 0) return false;

  std::vector<Edit> reversed;
  int x = n;
  int y = m;
  for (int d = found_d; d > 0; --d) {
    const std::vector<int>& prev = trace[d - 1];
    const int prev_offset = d - 1;
    int k = x - y;
    int prev_k;
    if (k == -d || (k != d && prev[k - 1 + prev_offset] < prev[k + 1 + prev_offset])) {
      prev_k = k + 1;
    } else {
      prev_k = k - 1;
    }
    int prev_x = prev[prev_k + prev_offset];
    int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x;
      --y;
      reversed.push_back({Op::kEqual, lo_a + x, lo_b + y});
    }
    if (x == prev_x) {
      --y;
      reversed.push_back({Op::kInsert, -1, lo_b + y});
    } else {
      --x;
      reversed.push_back({Op::kDelete, lo_a + x, -1});
    }
  }
  while (x > 0 && y > 0) {
    --x;
    --y;
    reversed.push_back({Op::kEqual, lo_a + x, lo_b + y});
  }
  out->insert(out->end(), reversed.rbegin(), reversed.rend());
  return true;
}

std::vector<Edit> ComputeEdits(const std::vector<std::string_view>& a,
                               const std::vector<std::string_view>& b) {
  const int n = static_cast<int>(a.size());
  const int m = static_cast<int>(b.size());
  int prefix = 0;
  while (prefix < n && prefix < m && a[prefix] == b[prefix]) ++prefix;
  int suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] == b[m - 1 - suffix]) {
    ++suffix;
  }
  std::vector<Edit> edits;
  for (int i = 0; i < prefix; ++i) edits.push_back({Op::kEqual, i, i});
  const int hi_a = n - suffix;
  const int hi_b = m - suffix;
  const int64_t span = static_cast<int64_t>(hi_a - prefix) + (hi_b - prefix);
  int max_d =
      span == 0 ? 0 : static_cast<int>(std::min<int64_t>(kMaxEditDistance, kMaxDiffWork / span));
  max_d = std::min<int64_t>(max_d, span);
  if (!MyersDiff(a, prefix, hi_a, b, prefix, hi_b, max_d, &edits)) {
    for (int i = prefix; i < hi_a; ++i) edits.push_back({Op::kDelete, i, -1});
    for (int j = prefix; j < hi_b; ++j) edits.push_back({Op::kInsert, -1, j});
  }
  for (int i = 0; i < suffix; ++i) edits.push_back({Op::kEqual, hi_a + i, hi_b + i});
  return edits;
}

void AppendLine(char mark, std::string_view line, std::string* out) {
  out->push_back(mark);
  if (!line.empty() && line.back() == '\n') {
    out->append(line);
  } else {
    out->append(line);
    out->append("\n\\ No newline at end of file\n");
  }
}

std::string Range(int start, int count) {
  // An empty range names the line before it (0 at the top of the file).
  return absl::StrCat(count == 0 ? start : start + 1, ",", count);
}

}  // namespace

std::string UnifiedDiff(std::string_view old_text, std::string_view new_text, std::string_view path,
                        int context) {
  if (old_text == new_text) return "";
  if (context < 0) context = 0;
  std::vector<std::string_view> a = SplitLines(old_text);
  std::vector<std::string_view> b = SplitLines(new_text);
  std::vector<Edit> edits = ComputeEdits(a, b);

  std::string out = absl::StrCat("--- a/", AbslView(path), "\n+++ b/", AbslView(path), "\n");
  const int total = static_cast<int>(edits.size());
  // Lines of each side consumed before edit e: where a hunk starting at e begins.
  std::vector<int> old_pos(total + 1, 0), new_pos(total + 1, 0);
  for (int e = 0; e < total; ++e) {
    old_pos[e + 1] = old_pos[e] + (edits[e].op != Op::kInsert ? 1 : 0);
    new_pos[e + 1] = new_pos[e] + (edits[e].op != Op::kDelete ? 1 : 0);
  }
  int i = 0;
  while (i < total) {
    // Find the next change, then extend the hunk while the next change is close enough
    // that the two contexts would touch.
    while (i < total && edits[i].op == Op::kEqual) ++i;
    if (i == total) break;
    int begin = std::max(0, i - context);
    int end = i;  // one past the last change in the hunk
    for (;;) {
      while (end < total && edits[end].op != Op::kEqual) ++end;
      int next = end;
      while (next < total && edits[next].op == Op::kEqual) ++next;
      if (next < total && next - end <= 2 * context) {
        end = next;
        continue;
      }
      break;
    }
    int stop = std::min(total, end + context);

    int old_start = old_pos[begin], new_start = new_pos[begin];
    int old_count = 0, new_count = 0;
    std::string body;
    for (int e = begin; e < stop; ++e) {
      const Edit& edit = edits[e];
      switch (edit.op) {
        case Op::kEqual:
          AppendLine(' ', a[edit.old_index], &body);
          ++old_count;
          ++new_count;
          break;
        case Op::kDelete:
          AppendLine('-', a[edit.old_index], &body);
          ++old_count;
          break;
        case Op::kInsert:
          AppendLine('+', b[edit.new_index], &body);
          ++new_count;
          break;
      }
    }
    absl::StrAppend(&out, "@@ -", Range(old_start, old_count), " +", Range(new_start, new_count),
                    " @@\n", body);
    i = stop;
  }
  return out;
}

DiffStat ComputeDiffStat(std::string_view old_text, std::string_view new_text) {
  DiffStat stat;
  if (old_text == new_text) return stat;
  for (const Edit& e : ComputeEdits(SplitLines(old_text), SplitLines(new_text))) {
    if (e.op == Op::kInsert) ++stat.added;
    if (e.op == Op::kDelete) ++stat.removed;
  }
  return stat;
}

}  // namespace agent::daemon::tools
