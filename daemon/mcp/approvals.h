// The record of which project-defined MCP servers a person approved: a server in a
// repository's .agent/settings.json is repository content (a clone can ship one), so it runs
// only once a person approved exactly that definition (command line, arguments, environment,
// cwd, or URL and headers: ServerDef::Identity) for that project. Kept in
// $XDG_STATE_HOME/agent/mcp-approvals.json, outside every repository; a changed definition
// needs a new approval. Servers of the user's own config need none.
//
// Thread-safe (one process-wide lock around the file).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "daemon/mcp/server_config.h"

namespace agent::daemon::mcp {

std::string ApprovalsPath();

// True for user servers, and for project servers whose exact definition was approved.
bool IsApproved(const ServerDef& server);

// Records the approval (idempotent). An approval of an older definition of the same server
// in the same project is replaced.
absl::Status RecordApproval(const ServerDef& server);

}  // namespace agent::daemon::mcp
