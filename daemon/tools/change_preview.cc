#include "daemon/tools/change_preview.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "daemon/tools/file_change.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/text_util.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/unified_diff.h"

namespace agent::daemon::tools {
namespace {

ChangePreview FromPlan(std::string_view verb, const PlannedChange& change) {
  ChangePreview p;
  // The diff goes into an event: a file that is not UTF-8 must not break the clients.
  p.diff = ToValidUtf8(UnifiedDiff(change.old_content, change.new_content, change.display));
  if (!change.exists) {
    p.summary =
        absl::StrCat("create ", change.display, " (", CountLines(change.new_content), " lines)");
    return p;
  }
  DiffStat stat = ComputeDiffStat(change.old_content, change.new_content);
  p.summary =
      absl::StrCat(AbslView(verb), " ", change.display, " (+", stat.added, " -", stat.removed, ")");
  return p;
}

}  // namespace

absl::StatusOr<ChangePreview> PreviewGatedCall(std::string_view tool, const Json& args,
                                               const ToolContext& ctx) {
  if (tool == "write_file") {
    ASSIGN_OR_RETURN(PlannedChange change, PlanWriteFile(args, ctx));
    return FromPlan("overwrite", change);
  }
  if (tool == "edit_file") {
    ASSIGN_OR_RETURN(PlannedChange change, PlanEditFile(args, ctx));
    return FromPlan("edit", change);
  }
  if (tool == "bash") {
    ASSIGN_OR_RETURN(std::string command, RequireString(args, "command", "bash"));
    return ChangePreview{std::move(command), ""};
  }
  if (tool.rfind("mcp__", 0) == 0) {  // an MCP server's tool: its name and arguments
    std::string summary = absl::StrCat(AbslView(tool), " ", DumpJson(args));
    if (summary.size() > 2000) summary = absl::StrCat(summary.substr(0, 2000), "…");
    return ChangePreview{ToValidUtf8(summary), ""};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no preview for \"", AbslView(tool), "\": not a gated tool"));
}

}  // namespace agent::daemon::tools
