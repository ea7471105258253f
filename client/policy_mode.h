// The policy modes as a person names them (`/mode auto`, the status line): ask, yes, auto,
// read-only, deny-unruled. Pure.
#pragma once

#include <optional>
#include <string>

#include "agent/v1/agent.pb.h"

namespace agent::client {

// "ask", "yes", "auto", "read-only", "deny-unruled" ("ask" for UNSPECIFIED).
std::string PolicyModeName(agent::v1::PolicyMode mode);

// The mode a person may switch to with /mode: ask, yes, auto, read-only. nullopt otherwise.
std::optional<agent::v1::PolicyMode> ParsePolicyMode(const std::string& name);

// One line for a change of mode: "mode: auto (set by alice@host:1234)".
std::string PolicyChangedLine(agent::v1::PolicyMode mode, const std::string& client);

}  // namespace agent::client
