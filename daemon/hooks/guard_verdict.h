// How a PreToolUse or PermissionRequest hook's answer changes the verdict of the mode and the
// rules on a gated call (call_policy.h). Pure.
//
//   a hook's deny refuses the call (the model is told the hook's reason);
//   a refusal of the mode or the rules stays a refusal: a deny rule wins over a hook's allow;
//   a hook's ask, or a guard that failed, makes the call a person's decision: asked, or
//     refused where nobody may be asked (read-only, deny-unruled: a one-shot run without a
//     terminal) — a guard never fails open, not under --yes either;
//   a hook's allow runs a call the rules would have asked about, unless the call writes what
//     only a person may allow (a protected path): that one is still asked.
#pragma once

#include "agent/v1/agent.pb.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/policy/call_policy.h"

namespace agent::daemon::hooks {

CallVerdict ApplyGuard(CallVerdict verdict, const ToolGuard& guard, agent::v1::PolicyMode mode,
                       bool protected_path);

}  // namespace agent::daemon::hooks
