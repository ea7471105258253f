#include "client/acp/modes.h"

#include <array>

namespace agent::client::acp {
namespace {

namespace v1 = agent::v1;

struct Mode {
  const char* id;
  const char* name;
  const char* description;
  v1::PolicyMode policy;
};

// A policy mode added to the daemon gets one line here.
constexpr std::array<Mode, 6> kModes = {{
    {"ask", "Ask", "Edits and commands ask first, unless a rule allows them", v1::POLICY_MODE_ASK},
    {"edits", "Accept edits", "Edits in the project run without asking; commands ask first",
     v1::POLICY_MODE_ACCEPT_EDITS},
    {"auto", "Auto", "Sandboxed commands and edits in the project run without asking",
     v1::POLICY_MODE_AUTO},
    {"plan", "Plan", "The agent reads and plans, changes nothing, then hands its plan over",
     v1::POLICY_MODE_PLAN},
    {"read-only", "Read-only", "Every edit and command is refused: the agent only reads",
     v1::POLICY_MODE_READ_ONLY},
    {"yes", "Allow all", "Edits and commands run without asking (as agent --yes)",
     v1::POLICY_MODE_YES},
}};

}  // namespace

Json ModeState(v1::PolicyMode current) {
  Json modes = Json::array();
  std::string current_id = "ask";  // UNSPECIFIED and the one-shot DENY_UNRULED show as ask
  for (const Mode& m : kModes) {
    modes.push_back(Json{{"id", m.id}, {"name", m.name}, {"description", m.description}});
    if (m.policy == current) current_id = m.id;
  }
  return Json{{"currentModeId", current_id}, {"availableModes", modes}};
}

std::optional<v1::PolicyMode> PolicyOfMode(std::string_view id) {
  for (const Mode& m : kModes) {
    if (id == m.id) return m.policy;
  }
  return std::nullopt;
}

}  // namespace agent::client::acp
