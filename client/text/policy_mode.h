// The policy modes as a person names them (`/mode auto`, the status line): ask, yes, auto,
// edits, read-only, deny-unruled. Pure.
#pragma once

#include <optional>
#include <string>

#include "agent/v1/agent.pb.h"

namespace agent::client {

// "ask", "yes", "auto", "edits", "read-only", "deny-unruled" ("ask" for UNSPECIFIED).
std::string PolicyModeName(agent::v1::PolicyMode mode);

// The mode a person may switch to with /mode: ask, yes, auto, edits (or accept-edits),
// read-only. nullopt otherwise.
std::optional<agent::v1::PolicyMode> ParsePolicyMode(const std::string& name);

// The command line's mode flags.
struct ModeFlags {
  bool read_only = false;     // --read-only
  bool auto_mode = false;     // --auto
  bool accept_edits = false;  // --accept-edits
  bool yes = false;           // --yes
  bool plan = false;          // --plan
};
// The mode they choose, the strictest first (--read-only, then --plan); `otherwise` when none
// is set.
agent::v1::PolicyMode ModeFromFlags(const ModeFlags& f, agent::v1::PolicyMode otherwise);

// One line for a change of mode: "mode: auto (set by alice@host:1234)".
std::string PolicyChangedLine(agent::v1::PolicyMode mode, const std::string& client);

}  // namespace agent::client
