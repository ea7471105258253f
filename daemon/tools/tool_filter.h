// A registry made of some tools of another, and maybe one more: the tools of a step narrowed
// for a session (a subagent's allow-list and the `task` tool, daemon/subagents/; plan mode's
// reading tools, daemon/session/). The result forwards to the base registry's tools and keeps
// it alive. Pure; the returned registry is immutable and thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon::tools {

// The tools of `base` that `keep` accepts, in base's order, then `extra` (when not null; it
// replaces a kept tool of its name).
std::shared_ptr<const ToolRegistry> FilterTools(
    std::shared_ptr<const ToolRegistry> base,
    const std::function<bool(std::string_view name)>& keep, std::unique_ptr<Tool> extra);

}  // namespace agent::daemon::tools
