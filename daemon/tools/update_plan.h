// update_plan {plan: [{step, status}], explanation?}: the model's short plan of a multi-step
// task. Not gated and changes nothing on disk: the session shows the plan to every attached
// client (Plan event, and in the snapshot). Stateless; thread-safe.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

inline constexpr char kUpdatePlanTool[] = "update_plan";

std::unique_ptr<Tool> NewUpdatePlanTool();

// The arguments checked and normalised: {"explanation": s, "plan": [{"step": s, "status":
// "pending" | "in_progress" | "done"}]} ("completed" is read as "done"). InvalidArgument
// says what is wrong, for the model to correct its call.
absl::StatusOr<Json> NormalizePlan(const Json& args);

}  // namespace agent::daemon::tools
