// What /allow says about a rule before the person relies on it: a rule that allows everything
// a tool can do, and a path glob that will not match what was likely meant (`*` stops at `/`).
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::client {

// One line per warning about the allow rule `rule` (empty when there is nothing to say).
std::vector<std::string> AllowRuleWarnings(std::string_view rule);

}  // namespace agent::client
