// find_files {pattern, path?}: files whose path (relative to `path`, default the project)
// matches a glob; see glob.h. Honours .gitignore, skips .git/ and .agent/. Results are
// workdir-relative, sorted, and capped with a count of what was left out.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/glob.h"
#include "daemon/tools/path_resolver.h"
#include "daemon/tools/text_util.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_helpers.h"
#include "daemon/tools/tree_walker.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kMaxResults = 500;

// `rel` (workdir-relative) made relative to the walk's start `start_rel` ("" for the root).
std::string_view BelowStart(std::string_view rel, std::string_view start_rel) {
  if (start_rel.empty()) return rel;
  return rel.substr(std::min(rel.size(), start_rel.size() + 1));
}

class FindFilesTool : public TextTool {
 public:
  FindFilesTool()
      : TextTool("find_files", /*gated=*/false,
                 "Find files by glob (*, ?, **, {a,b}); a pattern without '/' matches names at any "
                 "depth. Skips .gitignored files.",
                 {{"pattern", Property("string", "e.g. \"*.cc\" or \"src/**/test_*.py\"")},
                  {"path", Property("string", "directory to search")}},
                 {"pattern"}) {}

 private:
  absl::StatusOr<std::string> RunText(const Json& args, ToolContext& ctx) const override {
    ASSIGN_OR_RETURN(std::string pattern, RequireString(args, "pattern", Name()));
    ASSIGN_OR_RETURN(std::optional<std::string> path, OptionalString(args, "path", Name()));
    if (pattern.empty()) return absl::InvalidArgumentError("find_files: pattern is empty");
    ASSIGN_OR_RETURN(std::string start, ResolveInside(ctx.workdir, path.value_or(".")));
    std::string start_rel = RelativeToWorkdir(ctx.workdir, start);
    if (start_rel == ".") start_rel.clear();

    PathGlob glob(pattern);
    std::vector<std::string> matches;
    size_t total = 0;
    WalkStats stats;
    RETURN_IF_ERROR(WalkFiles(
        ctx.workdir, start, WalkOptions{},
        [&](const WalkEntry& e) {
          if (!glob.Matches(BelowStart(e.rel_path, start_rel))) return true;
          ++total;
          matches.push_back(e.rel_path);
          // Keep memory bounded; the sort below needs only a generous sample.
          if (matches.size() > 4 * kMaxResults) {
            std::sort(matches.begin(), matches.end());
            matches.resize(kMaxResults);
          }
          return true;
        },
        &stats));
    std::sort(matches.begin(), matches.end());
    if (matches.size() > kMaxResults) matches.resize(kMaxResults);

    std::string out;
    if (total == 0) {
      absl::StrAppend(&out, "No files match ", pattern, "\n");
    }
    for (const std::string& m : matches) absl::StrAppend(&out, m, "\n");
    if (total > matches.size()) {
      absl::StrAppend(&out, "… and ", total - matches.size(),
                      " more files (narrow the pattern or path)\n");
    }
    if (stats.truncated) {
      absl::StrAppend(&out, "(stopped after ", stats.entries_seen - 1,
                      " entries; narrow the path)\n");
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> NewFindFilesTool() { return std::make_unique<FindFilesTool>(); }

}  // namespace agent::daemon::tools
