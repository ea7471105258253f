// write_file {path, content}: creates a file (and its parent directories inside the project)
// or replaces one. Overwriting an existing file needs a read_file of it first, and refuses if
// it changed since: the model must not clobber what it has not seen. See file_change.h.
#include "absl/strings/str_cat.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/file_change.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

class WriteFileTool : public DeclaredTool {
 public:
  WriteFileTool()
      : DeclaredTool("write_file", /*gated=*/true,
                     "Create or overwrite a file with content. Read an existing file "
                     "first; prefer edit_file for changes.",
                     {{"path", Property("string")}, {"content", Property("string")}},
                     {"path", "content"}) {}

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    absl::StatusOr<PlannedChange> change = PlanWriteFile(args, ctx);
    if (!change.ok()) return ErrorOutcome(change.status());
    if (absl::Status s = CommitChange(*change, ctx); !s.ok()) return ErrorOutcome(s);
    return ToolOutcome{absl::StrCat(change->exists ? "Wrote " : "Created ", change->display, " (",
                                    CountLines(change->new_content), " lines, ",
                                    change->new_content.size(), " bytes)"),
                       false};
  }
};

}  // namespace

std::unique_ptr<Tool> NewWriteFileTool() { return std::make_unique<WriteFileTool>(); }

}  // namespace agent::daemon::tools
