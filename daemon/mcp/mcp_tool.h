// McpTool: one tool of an MCP server as the session's ToolRegistry holds it. Always gated
// (MCP tools pass the policy like bash: asked about unless a rule allows them); a tool
// annotated readOnlyHint may run in a concurrent batch. Run calls the server, streams progress
// notifications as tool output, caps the result like bash output, and answers every call with
// exactly one outcome: a crash, a timeout or a cancel is an error outcome, never a hang.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "daemon/mcp/client.h"
#include "daemon/mcp/managed_server.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::mcp {

class McpTool : public tools::Tool {
 public:
  McpTool(std::shared_ptr<ManagedServer> server, ToolInfo info, std::string model_name);

  std::string_view Name() const override { return model_name_; }
  Json Schema() const override;
  bool Gated() const override { return true; }
  bool Concurrent() const override { return info_.read_only; }
  tools::ToolOutcome Run(const Json& args, tools::ToolContext& ctx) const override;

 private:
  std::shared_ptr<ManagedServer> server_;
  ToolInfo info_;
  std::string model_name_;
};

// "progress 3/10: message" for a notifications/progress params object.
std::string ProgressLine(const Json& params);

}  // namespace agent::daemon::mcp
