// present_plan {plan}: plan mode's last call. The plan (Markdown) is shown to every attached
// client with the ways to go on: in auto mode, accepting edits, asking before each change, or
// to keep planning; a person's choice sets the session's mode and is the call's result, and
// words typed instead are feedback to plan with. Offered only in plan mode (the session adds
// it to the step's tools); not gated; never run beside another call.
#pragma once

#include <memory>

#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

inline constexpr char kPresentPlanTool[] = "present_plan";

std::unique_ptr<Tool> NewPresentPlanTool();

}  // namespace agent::daemon::tools
