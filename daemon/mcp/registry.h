// Registry: the daemon's MCP servers, shared by all sessions (but an editor's, which serve the
// one session it gave them for). Definitions are read from the
// user's config.json and the project's .agent/settings.json whenever a session asks (so an
// edit or `agent mcp add` takes effect at the next model request); each distinct definition
// (ServerDef::Identity) gets one ManagedServer, started lazily by the first session step that
// needs its tools, or at daemon start with "start": "eager" (user servers only: project
// servers wait for a session of their project). A project server runs only once approved
// (approvals.h).
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/mcp/managed_server.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon::mcp {

// Stdio for a "command", Streamable HTTP for a "url".
absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(const ServerDef& def);
// The same, with a project's stdio servers confined by `box` when it confines (network as
// the definition's "network" says); the user's own servers run as the user defined them, in a
// PID namespace of their own when `box` confines (so that a server ends with everything it
// started).
absl::StatusOr<std::unique_ptr<Transport>> MakeConfinedTransport(const ServerDef& def,
                                                                 const sandbox::Sandbox* box);

class Registry {
 public:
  struct Options {
    TransportFactory make_transport = MakeTransport;
    Backoff backoff;
    // The tools every session has before the MCP ones (the core tools).
    std::function<tools::ToolRegistry()> base_tools = [] { return tools::ToolRegistry(); };
  };
  explicit Registry(Options options);
  ~Registry();

  // The tools of one model request of session `session_id` in `project`: the base tools, then
  // the tools of each running server in definition order. Starts the servers it needs and
  // waits (bounded by their startup timeout, and `cancelled`) for those starting. Problems
  // (a server that failed, waits for approval, or a bad definition) go to `report`, each
  // once per session.
  std::shared_ptr<const tools::ToolRegistry> ToolsFor(
      const std::string& project, const std::string& session_id, const std::atomic<bool>* cancelled,
      const std::function<void(const std::string&)>& report);

  // What `agent mcp ls` shows for a project.
  std::vector<agent::v1::McpServer> List(const std::string& project);

  // Records a person's approval of the project's server `name` whose target is `target` and
  // whose whole definition (ServerDef::Identity, what the person was shown) is `definition`.
  // InvalidArgument without a definition, NotFound for a name the project does not define,
  // FailedPrecondition when either differs (the file changed since it was shown).
  absl::Status Approve(const std::string& project, const std::string& name,
                       const std::string& target, const std::string& definition);

  // An editor's servers for session `session_id` in `project` (ACP's mcpServers, in the shape
  // of "mcp_servers": {NAME: definition}): offered to that session only, after the user's and
  // the project's, until EndSession or the next call replaces them (the servers that left are
  // stopped). They are the person's own, as the editor's configuration is: no approval, run
  // as user servers are. InvalidArgument listing the definitions that are not valid (nothing
  // changes then).
  absl::Status SetSessionServers(const std::string& project, const std::string& session_id,
                                 const Json& servers) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the servers an editor gave session `session_id` and forgets them (it ended).
  void EndSession(const std::string& session_id) ABSL_LOCKS_EXCLUDED(mu_);

  // Starts the user's eager servers.
  void StartEager();
  // Stops every server (their processes are killed); later calls start nothing.
  void Shutdown();

 private:
  std::shared_ptr<ManagedServer> ServerFor(const ServerDef& def) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the servers whose definition left the user's config, or `project`'s settings
  // (`defs` is what the project sees now): an edited definition is a new server.
  void StopReplaced(const std::string& project, const ParsedServers& defs) ABSL_LOCKS_EXCLUDED(mu_);
  bool FirstReport(const std::string& session_id, const std::string& problem)
      ABSL_LOCKS_EXCLUDED(mu_);

  Options options_;
  Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<ManagedServer>> servers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> reported_ ABSL_GUARDED_BY(mu_);
  // Session id → the servers its editor gave (SetSessionServers).
  std::map<std::string, std::vector<ServerDef>> session_defs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon::mcp
