// What the hooks of one event decided, from how each ended and what it printed (Claude Code's
// contract): exit 0 with optional JSON on stdout; exit 2 blocks, stderr being the reason; any
// other end (another exit code, a signal, a timeout, a start failure) is a failure of the hook,
// and so is stdout that is not the JSON a guard (PreToolUse, PermissionRequest) must print.
// Several hooks combine: deny wins over ask, ask over allow; contexts are joined. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "daemon/hooks/hook_config.h"
#include "daemon/hooks/hook_runner.h"

namespace agent::daemon::hooks {

enum class Permission { kNone, kAllow, kAsk, kDeny };

struct HookOutcome {
  // Exit 2, `"decision": "block"`, a deny: the prompt, the stop or the call is refused.
  bool block = false;
  std::string reason;                         // why (what the model or the person is told)
  Permission permission = Permission::kNone;  // PreToolUse, PermissionRequest
  std::optional<Json> updated_input;          // PreToolUse, PermissionRequest: the call's new input
  std::vector<std::string> context;           // for the model (additionalContext, plain stdout)
  bool stop = false;                          // `"continue": false`: end the turn
  std::string stop_reason;
  std::vector<std::string> messages;  // systemMessage: for the people attached
  std::vector<std::string> failures;  // one line per hook that failed, naming it
  bool ran = false;                   // at least one hook matched and ran
  bool user_allowed = false;          // an allow came from the user's own hooks (not the project's)
};

// Folds the runs of `commands` (same order) for `event`.
HookOutcome Decide(std::string_view event, const std::vector<HookCommand>& commands,
                   const std::vector<HookRun>& runs);

// Whether a failing hook of `event` must stop what it guards (it never fails open).
bool IsGuardEvent(std::string_view event);

}  // namespace agent::daemon::hooks
