// The tools of one model request of a session, rebuilt from the daemon's (core and MCP) for
// subagents: the `task` tool added for a session that may delegate, the allow-list of a
// child's agent definition applied. The result forwards to the base registry's tools and
// keeps it alive. Pure; the returned registry is immutable and thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon::subagents {

// The tools of `base` that `keep` accepts, in base's order, then `extra` (when not null).
std::shared_ptr<const tools::ToolRegistry> FilterTools(
    std::shared_ptr<const tools::ToolRegistry> base,
    const std::function<bool(std::string_view name)>& keep, std::unique_ptr<tools::Tool> extra);

}  // namespace agent::daemon::subagents
