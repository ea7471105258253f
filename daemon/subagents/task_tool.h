// The `task` tool of one session: its schema lists the agent definitions available (names
// and descriptions, bounded), and Run hands the call to Subagents::RunTask. Not gated (the
// child's own calls are), concurrent (several children of one reply run at once).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon/subagents/agent_definition.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::subagents {

inline constexpr std::string_view kTaskTool = "task";
// Bytes of the agents' list in the tool's description.
inline constexpr size_t kMaxAgentListBytes = 4096;

using RunTaskFn = std::function<tools::ToolOutcome(const Json& args, tools::ToolContext& ctx)>;

std::unique_ptr<tools::Tool> NewTaskTool(const std::vector<AgentDefinition>& agents, RunTaskFn run);

// The description's list of agents ("- name: description" lines), cut at kMaxAgentListBytes.
std::string AgentList(const std::vector<AgentDefinition>& agents);

}  // namespace agent::daemon::subagents
