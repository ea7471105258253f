// The model's plan (update_plan) as the client shows it: one line per step with a mark for
// its state. Pure; thread-safe.
#pragma once

#include <string>

#include "agent/v1/agent.pb.h"

namespace agent::client {

// "plan: why\n  [x] done step\n  [>] current step\n  [ ] later step\n"; empty for no steps.
std::string PlanText(const agent::v1::Plan& plan);

}  // namespace agent::client
