// What the user is shown when asked to approve a gated call: for write_file and edit_file the
// unified diff the call would make, computed without writing; for bash the command. A call
// that would fail anyway (no match, unread file, path outside the project, bad arguments)
// returns that error, so the caller can answer the model without bothering the user.
// Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

struct ChangePreview {
  std::string summary;  // one line: "edit src/a.cc (+2 -1)", "create x.txt (10 lines)", the command
  std::string diff;     // unified diff; empty for bash or a write that changes nothing
};

// kInvalidArgument for a tool that is not gated or unknown; otherwise the errors the call
// itself would meet.
absl::StatusOr<ChangePreview> PreviewGatedCall(std::string_view tool, const Json& args,
                                               const ToolContext& ctx);

}  // namespace agent::daemon::tools
