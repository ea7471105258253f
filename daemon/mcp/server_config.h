// MCP server definitions: `"mcp_servers": {NAME: {...}}` in the user's config.json and in a
// project's .agent/settings.json. A stdio server is {"command", "args": [], "env": {},
// "cwd"}; a Streamable HTTP server {"url", "headers": {}}; both may add "start": "eager"|"lazy",
// "timeout_ms" (per call, default 120000) and "startup_timeout_ms" (initialize and the first
// tools/list, default 30000), and choose the tools offered to the model with "enabled_tools"
// (only these) and "disabled_tools" (not these): the server's own tool names, `*` matching any
// run of characters. Pure functions, except the loaders, which read files; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::daemon::mcp {

struct ServerDef {
  std::string name;
  std::string scope;    // "user", "project" or "editor" (an ACP editor's, for one session)
  std::string project;  // the project's directory for scope "project" and "editor"
  std::string session;  // scope "editor": the session it was given for (one server each)
  std::string command;  // stdio
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;  // "" : the project (project scope) or $HOME (user scope)
  std::string url;  // http
  std::vector<std::pair<std::string, std::string>> headers;
  bool eager = false;
  // "network": true: a project's stdio server confined by the sandbox keeps the network.
  bool network = false;
  int timeout_ms = 120000;
  int startup_timeout_ms = 30000;
  // Which of its tools the model is offered. Not part of Identity: a filter changes what is
  // offered, not what runs, so editing one neither restarts the server nor needs an approval.
  bool has_enabled_tools = false;  // "enabled_tools" given: only those
  std::vector<std::string> enabled_tools;
  std::vector<std::string> disabled_tools;

  bool is_http() const { return !url.empty(); }
  // Whether the filters let the model see the server's tool `tool` (its own name).
  bool Offers(std::string_view tool) const;
  // The command line, its words quoted where the shell would need it, or the URL: what a
  // person approves and `agent mcp ls` shows.
  std::string Target() const;
  // Everything that decides what runs, as canonical JSON: two definitions with the same
  // identity share one server process, and an approval covers exactly this.
  std::string Identity() const;
};

struct ParsedServers {
  std::vector<ServerDef> servers;
  // One line per definition that was left out: "NAME: problem" (or the file's problem).
  std::vector<std::string> problems;
};

// The "mcp_servers" member of a parsed settings object (absent or null: none).
ParsedServers ParseServers(const Json& settings, const std::string& scope,
                           const std::string& project, const std::string& source);

// The user's servers, from $XDG_CONFIG_HOME/agent/config.json.
ParsedServers LoadUserServers();
// The project's, from <project>/.agent/settings.json, opened without following symlinks.
ParsedServers LoadProjectServers(const std::string& project);

// What a session in `project` sees: the user's servers, then the project's. A server whose
// name shares its McpServerNameKey with an earlier one (same name, other case, trailing `_` or
// `-`) is left out with a problem naming both: the user's server keeps its name.
ParsedServers ServersFor(const std::string& project);

}  // namespace agent::daemon::mcp
