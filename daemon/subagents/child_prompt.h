// The system message of a child session: its agent definition's prompt (or, for the
// built-in general agent, the usual one), the environment facts, a note on being a subagent,
// then the project's instruction files as every session has them. Thread-safe.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "daemon/prompt/system_prompt.h"
#include "daemon/subagents/agent_definition.h"

namespace agent::daemon::subagents {

BuiltSystemPrompt ChildSystemPrompt(const AgentDefinition& def, const std::string& workdir,
                                    const std::string& cwd, absl::Time now);

}  // namespace agent::daemon::subagents
