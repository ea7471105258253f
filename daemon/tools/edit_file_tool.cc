// edit_file {path, old_string, new_string, replace_all?}: exact-string replacement in a file
// the agent has read and that has not changed since. No match, or several without
// replace_all, is an error naming the count. See file_change.h.
#include "absl/strings/str_cat.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/file_change.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

class EditFileTool : public DeclaredTool {
 public:
  EditFileTool()
      : DeclaredTool(
            "edit_file", /*gated=*/true,
            "Replace old_string with new_string in a file you have read. old_string must match "
            "exactly and be unique unless replace_all.",
            {{"path", Property("string")},
             {"old_string", Property("string")},
             {"new_string", Property("string")},
             {"replace_all", Property("boolean")}},
            {"path", "old_string", "new_string"}) {}

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    absl::StatusOr<PlannedChange> change = PlanEditFile(args, ctx);
    if (!change.ok()) return ErrorOutcome(change.status());
    if (absl::Status s = CommitChange(*change, ctx); !s.ok()) return ErrorOutcome(s);
    return ToolOutcome{absl::StrCat("Edited ", change->display, " (", change->replacements,
                                    change->replacements == 1 ? " replacement)" : " replacements)"),
                       false};
  }
};

}  // namespace

std::unique_ptr<Tool> NewEditFileTool() { return std::make_unique<EditFileTool>(); }

}  // namespace agent::daemon::tools
