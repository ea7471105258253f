#include "daemon/subagents/task_tool.h"

#include "absl/strings/str_cat.h"

namespace agent::daemon::subagents {
namespace {

class TaskTool : public tools::Tool {
 public:
  TaskTool(std::string agents, RunTaskFn run) : agents_(std::move(agents)), run_(std::move(run)) {}
  std::string_view Name() const override { return kTaskTool; }
  bool Gated() const override { return false; }
  bool Concurrent() const override { return true; }
  Json Schema() const override {
    const std::string description = absl::StrCat(
        "Hand a self-contained task to a subagent: a fresh session with its own context that "
        "works on it alone and returns only its final answer (with its session id). Use it "
        "for searches or side tasks that would fill your context; several task calls in one "
        "reply run at the same time. The prompt must hold everything the subagent needs.\n"
        "Agents:\n",
        agents_);
    return Json{
        {"type", "function"},
        {"function",
         {{"name", std::string(kTaskTool)},
          {"description", description},
          {"parameters",
           {{"type", "object"},
            {"properties",
             {{"description", {{"type", "string"}, {"description", "A short title (3-8 words)"}}},
              {"prompt", {{"type", "string"}, {"description", "The full instructions"}}},
              {"agent",
               {{"type", "string"}, {"description", "The agent to run; default general"}}}}},
            {"required", {"description", "prompt"}}}}}}};
  }
  tools::ToolOutcome Run(const Json& args, tools::ToolContext& ctx) const override {
    return run_(args, ctx);
  }

 private:
  std::string agents_;
  RunTaskFn run_;
};

}  // namespace

std::string AgentList(const std::vector<AgentDefinition>& agents) {
  std::string out;
  for (const AgentDefinition& a : agents) {
    std::string line = absl::StrCat("- ", a.name, ": ", a.description, "\n");
    if (out.size() + line.size() > kMaxAgentListBytes) {
      absl::StrAppend(&out, "- (more agents not listed)\n");
      break;
    }
    out += line;
  }
  return out;
}

std::unique_ptr<tools::Tool> NewTaskTool(const std::vector<AgentDefinition>& agents,
                                         RunTaskFn run) {
  return std::make_unique<TaskTool>(AgentList(agents), std::move(run));
}

}  // namespace agent::daemon::subagents
