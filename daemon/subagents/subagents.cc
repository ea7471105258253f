#include "daemon/subagents/subagents.h"

#include "absl/strings/str_cat.h"
#include "daemon/subagents/agent_definition.h"
#include "daemon/subagents/child_prompt.h"
#include "daemon/subagents/child_runner.h"
#include "daemon/subagents/task_result.h"
#include "daemon/subagents/task_tool.h"
#include "daemon/tools/text_util.h"
#include "daemon/tools/tool_filter.h"

namespace agent::daemon::subagents {
namespace {

constexpr absl::Duration kSlotPoll = absl::Milliseconds(50);
constexpr size_t kMaxTitleBytes = 120;

tools::ToolOutcome Refuse(std::string text) { return {std::move(text), true}; }

// A string argument, or "" when absent or not a string.
std::string StringArg(const Json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : "";
}

// One line, bounded: it is shown as the child's title.
std::string CleanTitle(const std::string& raw) {
  std::string out;
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  return std::string(tools::Utf8Prefix(out, kMaxTitleBytes));
}

}  // namespace

Subagents::Subagents(SubagentOptions options) : options_(std::move(options)) {}

std::string Subagents::UserDir() const {
  return options_.user_agents_dir.empty() ? UserAgentsDir() : options_.user_agents_dir;
}

std::shared_ptr<const tools::ToolRegistry> Subagents::ToolsFor(
    std::shared_ptr<const tools::ToolRegistry> base, const std::string& workdir,
    const std::string& session_id) {
  if (manager_ == nullptr) return base;
  auto session = manager_->Find(session_id);
  // Fail closed: a child whose definition cannot be checked (the daemon is stopping) gets
  // no tools rather than all of them.
  if (!session.ok()) {
    return tools::FilterTools(
        std::move(base), [](std::string_view) { return false; }, nullptr);
  }
  const agent::v1::Session info = (*session)->Info();
  const int depth = info.depth();
  auto task = [this, session_id](const Json& args, tools::ToolContext& ctx) {
    return RunTask(session_id, args, ctx);
  };
  if (info.agent().empty()) {  // a session a person started
    if (options_.max_depth < 1) return base;
    // A base tool named `task` (an MCP server's) never stands in for ours: ours replaces it.
    return tools::FilterTools(
        std::move(base), [](std::string_view) { return true; },
        NewTaskTool(ListAgents(workdir, UserDir()), task));
  }
  // The definition is read again at each step (a child resumed after a restart too). One that
  // is gone or no longer parses may have narrowed the tools: the child gets none (fail closed).
  AgentDefinition def;
  if (auto found = FindAgent(workdir, UserDir(), info.agent()); found.ok()) {
    def = *found;
  } else {
    def.all_tools = false;
  }
  const int max_depth = options_.max_depth;
  std::unique_ptr<tools::Tool> extra;
  if (AgentMayUse(def, kTaskTool, depth, max_depth)) {
    extra = NewTaskTool(ListAgents(workdir, UserDir()), task);
  }
  return tools::FilterTools(
      std::move(base),
      [&def, depth, max_depth](std::string_view name) {
        return AgentMayUse(def, name, depth, max_depth);
      },
      std::move(extra));
}

bool Subagents::AcquireSlot(const std::string& parent_id, const std::atomic<bool>* cancelled) {
  agent::MutexLock l(&mu_);
  // Bounded by the children running: each ends (see ChildRunner::Run), or a cancel comes.
  while (running_[parent_id] >= std::max(options_.max_concurrent, 1)) {
    if (cancelled != nullptr && *cancelled) return false;
    slot_freed_.WaitWithTimeout(&mu_, kSlotPoll);
  }
  ++running_[parent_id];
  return true;
}

void Subagents::ReleaseSlot(const std::string& parent_id) {
  {
    agent::MutexLock l(&mu_);
    if (--running_[parent_id] <= 0) running_.erase(parent_id);
  }
  slot_freed_.SignalAll();
}

tools::ToolOutcome Subagents::RunTask(const std::string& parent_id, const Json& args,
                                      const tools::ToolContext& ctx) {
  const std::string title = CleanTitle(StringArg(args, "description"));
  const std::string prompt = StringArg(args, "prompt");
  std::string agent_name = StringArg(args, "agent");
  if (agent_name.empty()) agent_name = std::string(kGeneralAgent);
  if (title.empty() || prompt.empty()) {
    return Refuse("task needs \"description\" (a short title) and \"prompt\" (the instructions)");
  }
  if (manager_ == nullptr) return Refuse("subagents are not available in this daemon");
  auto parent = manager_->Find(parent_id);
  if (!parent.ok()) return Refuse(std::string(parent.status().message()));
  const int depth = (*parent)->Info().depth() + 1;
  if (depth > options_.max_depth) {
    return Refuse(absl::StrCat("a subagent at this depth cannot start another (limit ",
                               options_.max_depth, ")"));
  }
  const std::string workdir = (*parent)->workdir();
  auto def = FindAgent(workdir, UserDir(), agent_name);
  if (!def.ok()) return Refuse(std::string(def.status().message()));
  if (!AcquireSlot(parent_id, ctx.cancelled)) return Refuse("Not run: cancelled by the user.");
  SessionSettings settings = (*parent)->InheritedSettings();
  if (!def->model.empty()) settings.model.model = def->model;
  settings.child = SessionSettings::ChildOf{
      parent_id, def->name, depth, ChildSystemPrompt(*def, workdir, settings.cwd, absl::Now())};
  auto child = manager_->CreateChild(workdir, std::move(settings), title);
  if (!child.ok()) {
    ReleaseSlot(parent_id);
    return Refuse(absl::StrCat("cannot start the subagent: ", child.status().message()));
  }
  ChildRunner runner({*parent, *child, ctx.call_id, title, def->name, prompt, ctx.cancelled});
  ChildEnd end = runner.Run();
  ReleaseSlot(parent_id);
  return FormatTaskResult(end);
}

}  // namespace agent::daemon::subagents
