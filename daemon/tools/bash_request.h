// What a `bash` call asks for, read from its checked arguments (tool_input.h). The bash tool
// and the policy (daemon/policy/escalation.h) both read a call through this one function, so the
// command the policy judged and whether it leaves the sandbox are what the tool runs.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::daemon::tools {

struct BashRequest {
  std::string command;
  std::optional<int64_t> timeout_s;
  bool background = false;
  bool escalate = false;  // run outside the sandbox (a person decides)
  std::string justification;
};

// kInvalidArgument for a missing command or a field of the wrong type (never coerced here:
// CheckToolInput did that once, before anyone read the call).
absl::StatusOr<BashRequest> ReadBashRequest(const Json& args);

}  // namespace agent::daemon::tools
