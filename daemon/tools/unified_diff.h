// Unified diffs for showing a proposed change to the user before it is approved. Pure;
// thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace agent::daemon::tools {

// `--- a/path`, `+++ b/path`, then `@@ -l,n +l,n @@` hunks with `context` lines around each
// change; a line without a final newline is followed by `\ No newline at end of file`.
// Identical texts give "". Lines are compared whole. The common head and tail are stripped
// first; the rest is diffed with Myers' algorithm, and when that would cost too much (huge,
// unrelated texts) the differing middle becomes one delete-all / insert-all hunk.
std::string UnifiedDiff(std::string_view old_text, std::string_view new_text, std::string_view path,
                        int context = 3);

// Lines added and removed by the same diff, for summaries ("+3 -1").
struct DiffStat {
  int added = 0;
  int removed = 0;
};
DiffStat ComputeDiffStat(std::string_view old_text, std::string_view new_text);

}  // namespace agent::daemon::tools
