// The editor's MCP servers (session/new's and session/load's `mcpServers`) in the shape of
// config.json's "mcp_servers", for SetSessionMcpServers: a stdio server {name, command, args,
// env: [{name, value}]} becomes {"command", "args", "env": {}}, an HTTP one {type: "http",
// name, url, headers: [{name, value}]} {"url", "headers": {}}. The daemon checks the rest as it
// checks config.json. Pure.
#pragma once

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::client::acp {

// The servers as a JSON object keyed by name; an empty object for none (absent, null or []).
// InvalidArgument naming the entry for what cannot be one: not an object, no name, a name
// given twice, an SSE server (initialize offers stdio and http), a malformed env or header.
absl::StatusOr<Json> EditorMcpServers(const Json& params);

}  // namespace agent::client::acp
