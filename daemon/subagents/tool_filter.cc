#include "daemon/subagents/tool_filter.h"

#include <utility>

namespace agent::daemon::subagents {
namespace {

// One tool of another registry, which it keeps alive.
class ForwardingTool : public tools::Tool {
 public:
  ForwardingTool(std::shared_ptr<const tools::ToolRegistry> owner, const tools::Tool* tool)
      : owner_(std::move(owner)), tool_(tool) {}
  std::string_view Name() const override { return tool_->Name(); }
  Json Schema() const override { return tool_->Schema(); }
  bool Gated() const override { return tool_->Gated(); }
  bool Concurrent() const override { return tool_->Concurrent(); }
  tools::ToolOutcome Run(const Json& args, tools::ToolContext& ctx) const override {
    return tool_->Run(args, ctx);
  }

 private:
  std::shared_ptr<const tools::ToolRegistry> owner_;
  const tools::Tool* tool_;
};

}  // namespace

std::shared_ptr<const tools::ToolRegistry> FilterTools(
    std::shared_ptr<const tools::ToolRegistry> base,
    const std::function<bool(std::string_view name)>& keep, std::unique_ptr<tools::Tool> extra) {
  auto out = std::make_shared<tools::ToolRegistry>();
  if (base) {
    for (std::string_view name : base->Names()) {
      // A base tool named `task` (an MCP server's) never stands in for ours.
      if (name == "task" || !keep(name)) continue;
      out->Add(std::make_unique<ForwardingTool>(base, base->Find(name)));
    }
  }
  if (extra) out->Add(std::move(extra));
  return out;
}

}  // namespace agent::daemon::subagents
