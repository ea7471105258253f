#include "daemon/tools/tool_filter.h"

#include <utility>

namespace agent::daemon::tools {
namespace {

// One tool of another registry, which it keeps alive.
class ForwardingTool : public Tool {
 public:
  ForwardingTool(std::shared_ptr<const ToolRegistry> owner, const Tool* tool)
      : owner_(std::move(owner)), tool_(tool) {}
  std::string_view Name() const override { return tool_->Name(); }
  Json Schema() const override { return tool_->Schema(); }
  bool Gated() const override { return tool_->Gated(); }
  bool Concurrent() const override { return tool_->Concurrent(); }
  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    return tool_->Run(args, ctx);
  }

 private:
  std::shared_ptr<const ToolRegistry> owner_;
  const Tool* tool_;
};

}  // namespace

std::shared_ptr<const ToolRegistry> FilterTools(
    std::shared_ptr<const ToolRegistry> base,
    const std::function<bool(std::string_view name)>& keep, std::unique_ptr<Tool> extra) {
  auto out = std::make_shared<ToolRegistry>();
  if (base) {
    for (std::string_view name : base->Names()) {
      if (!keep(name)) continue;
      out->Add(std::make_unique<ForwardingTool>(base, base->Find(name)));
    }
  }
  if (extra) out->Add(std::move(extra));
  return out;
}

}  // namespace agent::daemon::tools
