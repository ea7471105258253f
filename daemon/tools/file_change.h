// What a write_file or edit_file call would do, worked out without touching the disk, so the
// same checks serve the approval preview (change_preview.h) and the tool itself, which plans
// again at commit time (the file may have changed while the user was deciding). Stateless;
// thread-safe given a thread-safe FileTracker.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

struct PlannedChange {
  std::string abs_path;
  std::string display;  // relative to the workdir
  bool exists = false;
  std::string old_content;  // empty when !exists
  std::string new_content;
  int replacements = 0;  // edit_file only
};

// write_file {path, content}. Refuses paths outside the workdir, directories, and an existing
// file the agent has not read or that changed since (when ctx.files is set).
absl::StatusOr<PlannedChange> PlanWriteFile(const Json& args, const ToolContext& ctx);

// edit_file {path, old_string, new_string, replace_all?}. Besides the write_file checks: the
// file must exist, old_string must be non-empty, differ from new_string, and occur exactly
// once unless replace_all (the count is named when it does not).
absl::StatusOr<PlannedChange> PlanEditFile(const Json& args, const ToolContext& ctx);

// Writes the planned content (atomically, keeping the mode) and records it as known.
absl::Status CommitChange(const PlannedChange& change, const ToolContext& ctx);

}  // namespace agent::daemon::tools
