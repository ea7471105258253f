// The session modes an editor's switcher shows (session/new's "modes", session/set_mode):
// the daemon's policy modes under ACP ids. Pure.
#pragma once

#include <optional>
#include <string_view>

#include "agent/v1/agent.pb.h"
#include "common/json.h"

namespace agent::client::acp {

// {"currentModeId", "availableModes": [{id, name, description}]} with `current` selected.
Json ModeState(agent::v1::PolicyMode current);

// The policy of mode `id`; nullopt for an id ModeState does not list.
std::optional<agent::v1::PolicyMode> PolicyOfMode(std::string_view id);

}  // namespace agent::client::acp
