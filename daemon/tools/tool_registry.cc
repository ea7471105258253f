#include "daemon/tools/tool_registry.h"

#include "daemon/tools/core_tools.h"
#include "daemon/tools/update_plan.h"

namespace agent::daemon::tools {

ToolRegistry ToolRegistry::CreateCore() {
  ToolRegistry r;
  r.Add(NewReadFileTool());
  r.Add(NewListDirTool());
  r.Add(NewFindFilesTool());
  r.Add(NewSearchTool());
  r.Add(NewWriteFileTool());
  r.Add(NewEditFileTool());
  r.Add(NewBashTool());
  r.Add(NewBashJobTool());
  r.Add(NewUpdatePlanTool());
  r.Add(NewAskUserTool());
  return r;
}

void ToolRegistry::Add(std::unique_ptr<Tool> tool) {
  for (auto& existing : tools_) {
    if (existing->Name() == tool->Name()) {
      existing = std::move(tool);
      return;
    }
  }
  tools_.push_back(std::move(tool));
}

const Tool* ToolRegistry::Find(std::string_view name) const {
  for (const auto& t : tools_) {
    if (t->Name() == name) return t.get();
  }
  return nullptr;
}

Json ToolRegistry::Schemas() const {
  Json out = Json::array();
  for (const auto& t : tools_) out.push_back(t->Schema());
  return out;
}

bool ToolRegistry::IsReadOnly(std::string_view name) const {
  const Tool* t = Find(name);
  return t != nullptr && t->Concurrent();
}

std::vector<std::string_view> ToolRegistry::Names() const {
  std::vector<std::string_view> out;
  for (const auto& t : tools_) out.push_back(t->Name());
  return out;
}

}  // namespace agent::daemon::tools
