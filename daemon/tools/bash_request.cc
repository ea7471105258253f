#include "daemon/tools/bash_request.h"

#include "common/status_macros.h"
#include "daemon/tools/tool_args.h"

namespace agent::daemon::tools {

absl::StatusOr<BashRequest> ReadBashRequest(const Json& args) {
  BashRequest r;
  ASSIGN_OR_RETURN(r.command, RequireString(args, "command", "bash"));
  ASSIGN_OR_RETURN(r.timeout_s, OptionalInt(args, "timeout_s", "bash"));
  ASSIGN_OR_RETURN(std::optional<bool> background, OptionalBool(args, "background", "bash"));
  ASSIGN_OR_RETURN(std::optional<bool> escalate, OptionalBool(args, "escalate", "bash"));
  ASSIGN_OR_RETURN(std::optional<std::string> why, OptionalString(args, "justification", "bash"));
  r.background = background.value_or(false);
  r.escalate = escalate.value_or(false);
  r.justification = why.value_or("");
  return r;
}

}  // namespace agent::daemon::tools
