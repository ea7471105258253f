// SessionDeps: what a session needs from outside, passed in so tests can replace the model,
// the clock, the disk and the tools.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/llm/model_client.h"
#include "daemon/policy/rule_source.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/session/files.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon {

struct SessionDeps {
  std::string epoch;
  const tools::ToolRegistry* tools = nullptr;
  // When set, the tools of each model request instead of `tools` (the daemon's: the core tools
  // and the project's MCP tools, daemon/mcp/registry.h); `report` shows a problem to clients.
  std::function<std::shared_ptr<const tools::ToolRegistry>(
      const std::string& workdir, const std::string& session_id, const std::atomic<bool>* cancelled,
      const std::function<void(const std::string&)>& report)>
      tools_for;
  std::function<std::unique_ptr<llm::ModelClient>()> make_model_client;
  Config config;  // daemon defaults: thresholds, timeouts
  const Clock* clock = Clock::Real();
  // The permission rules of the project in `workdir`, asked for once per session (the
  // daemon's: policy::FileRuleSource over config.json and .agent/settings.json). Unset: no
  // rules.
  std::function<std::shared_ptr<policy::RuleSource>(const std::string& workdir)> rules_for;
  // Where file checkpoints are stored (checkpoints::StoresRoot() in the daemon); empty: the
  // session takes none.
  std::string checkpoint_stores;
  // The session's files (the disk seam); unset: DiskSessionFiles.
  std::function<std::unique_ptr<SessionFiles>(const std::string& workdir, const std::string& id)>
      files_for;
  // How commands are confined (daemon/sandbox/sandbox.h); null: not at all (tests).
  std::shared_ptr<const sandbox::Sandbox> sandbox;
  // Where the hooks of the project in `workdir` are read (hooks::DefaultHookFiles in the
  // daemon). Unset: no hooks.
  std::function<hooks::HookFiles(const std::string& workdir)> hook_files;
  // Called by the SessionManager, outside every lock, when a loaded session was deleted,
  // discarded or unloaded: what the daemon keeps for it elsewhere (an editor's MCP servers,
  // mcp::Registry::EndSession) can go. Unset: nothing to do.
  std::function<void(const std::string& session_id)> session_ended;
};

}  // namespace agent::daemon
