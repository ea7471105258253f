// search {pattern, path?, glob?}: lines matching an RE2 regex, as "path:line: text". `path`
// may be a file (searched even if gitignored: it was named) or a directory (walked like
// find_files: .gitignore honoured, .git/ and .agent/ skipped). Binary files, symlinks and
// files over 8 MiB are skipped. Matches are capped, with a count of the rest.
#include <sys/stat.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/glob.h"
#include "daemon/tools/path_resolver.h"
#include "daemon/tools/text_util.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_helpers.h"
#include "daemon/tools/tree_walker.h"
#include "re2/re2.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kMaxMatches = 200;
constexpr size_t kMaxLineShown = 300;
constexpr uint64_t kMaxFileBytes = 8 << 20;
// Total bytes read per call: counting matches past the cap must stay bounded too.
constexpr uint64_t kMaxBytesScanned = 256ull << 20;

struct SearchState {
  const RE2* re = nullptr;
  std::string out;
  size_t matches = 0;
  size_t big_files = 0;
  uint64_t bytes_scanned = 0;
  bool budget_hit = false;
};

// Returns false once the scan budget is spent.
bool SearchFile(const std::string& abs, const std::string& rel, SearchState& st) {
  absl::StatusOr<std::string> content = ReadRegularFile(abs, kMaxFileBytes, rel);
  if (absl::IsResourceExhausted(content.status())) {
    ++st.big_files;
    return true;
  }
  if (!content.ok() || LooksBinary(*content)) return true;
  st.bytes_scanned += content->size();
  std::string_view rest = *content;
  size_t line_no = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *st.re)) continue;
    if (++st.matches > kMaxMatches) continue;
    std::string_view shown = Utf8Prefix(line, kMaxLineShown);
    absl::StrAppend(&st.out, rel, ":", line_no, ": ", AbslView(shown),
                    shown.size() < line.size() ? "…" : "", "\n");
  }
  if (st.bytes_scanned > kMaxBytesScanned) {
    st.budget_hit = true;
    return false;
  }
  return true;
}

class SearchTool : public TextTool {
 public:
  SearchTool()
      : TextTool(
            "search", /*gated=*/false,
            "Search file contents with an RE2 regex; prints path:line: text. Skips .gitignored "
            "and binary files.",
            {{"pattern", Property("string", "RE2 regex, e.g. \"(?i)todo\"")},
             {"path", Property("string", "file or directory")},
             {"glob", Property("string", "file filter, e.g. \"*.py\"")}},
            {"pattern"}) {}

 private:
  absl::StatusOr<std::string> RunText(const Json& args, ToolContext& ctx) const override {
    ASSIGN_OR_RETURN(std::string pattern, RequireString(args, "pattern", Name()));
    ASSIGN_OR_RETURN(std::optional<std::string> path, OptionalString(args, "path", Name()));
    ASSIGN_OR_RETURN(std::optional<std::string> glob_arg, OptionalString(args, "glob", Name()));
    if (pattern.empty()) return absl::InvalidArgumentError("search: pattern is empty");
    RE2::Options options;
    options.set_log_errors(false);
    RE2 re(pattern, options);
    if (!re.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("search: invalid regex \"", pattern, "\": ", re.error()));
    }
    ASSIGN_OR_RETURN(std::string start, ResolveInside(ctx.workdir, path.value_or(".")));
    std::string start_rel = RelativeToWorkdir(ctx.workdir, start);

    SearchState st;
    st.re = &re;
    struct stat sb;
    if (::stat(start.c_str(), &sb) == 0 && S_ISREG(sb.st_mode)) {
      SearchFile(start, start_rel, st);
    } else {
      if (start_rel == ".") start_rel.clear();
      std::optional<PathGlob> glob;
      if (glob_arg.has_value() && !glob_arg->empty()) glob.emplace(*glob_arg);
      WalkStats stats;
      RETURN_IF_ERROR(WalkFiles(
          ctx.workdir, start, WalkOptions{},
          [&](const WalkEntry& e) {
            if (e.is_symlink) return true;  // its target is searched where it lives
            if (glob.has_value()) {
              std::string_view below = e.rel_path;
              if (!start_rel.empty()) below.remove_prefix(start_rel.size() + 1);
              if (!glob->Matches(below)) return true;
            }
            return SearchFile(e.abs_path, e.rel_path, st);
          },
          &stats));
      if (stats.truncated) {
        absl::StrAppend(&st.out, "(stopped after ", stats.entries_seen - 1,
                        " entries; narrow the path)\n");
      }
    }
    if (st.matches == 0) absl::StrAppend(&st.out, "No matches for ", pattern, "\n");
    if (st.matches > kMaxMatches) {
      absl::StrAppend(&st.out, "… ", st.matches - kMaxMatches, " more matches not shown (",
                      st.matches, " in all; narrow the pattern, path or glob)\n");
    }
    if (st.big_files > 0) {
      absl::StrAppend(&st.out, "(skipped ", st.big_files, " files over ", kMaxFileBytes >> 20,
                      " MiB)\n");
    }
    if (st.budget_hit) {
      absl::StrAppend(&st.out, "(stopped after reading ", kMaxBytesScanned >> 20,
                      " MiB; narrow the path)\n");
    }
    return st.out;
  }
};

}  // namespace

std::unique_ptr<Tool> NewSearchTool() { return std::make_unique<SearchTool>(); }

}  // namespace agent::daemon::tools
