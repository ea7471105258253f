#include "daemon/mcp/mcp_tool.h"

#include "absl/strings/str_cat.h"
#include "daemon/mcp/tool_shape.h"
#include "daemon/tools/output_cap.h"

namespace agent::daemon::mcp {
namespace {

// As bash output (daemon/tools/subprocess.h).
constexpr size_t kHeadBytes = 16 << 10;
constexpr size_t kTailBytes = 16 << 10;

std::string Number(const Json& j) {
  if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
  if (j.is_number()) return DumpJson(j);
  return "?";
}

}  // namespace

std::string ProgressLine(const Json& params) {
  std::string line = "progress";
  if (params.contains("progress")) absl::StrAppend(&line, " ", Number(params["progress"]));
  if (params.contains("total")) absl::StrAppend(&line, "/", Number(params["total"]));
  const std::string message = GetString(params, "message");
  if (!message.empty()) absl::StrAppend(&line, ": ", message.substr(0, 500));
  return line + "\n";
}

McpTool::McpTool(std::shared_ptr<ManagedServer> server, ToolInfo info, std::string model_name)
    : server_(std::move(server)), info_(std::move(info)), model_name_(std::move(model_name)) {}

Json McpTool::Schema() const {
  std::string description = info_.description;
  if (description.empty())
    description =
        absl::StrCat("Tool ", info_.name, " of the MCP server ", server_->def().name, ".");
  return FunctionSchema(model_name_, description, info_.input_schema);
}

tools::ToolOutcome McpTool::Run(const Json& args, tools::ToolContext& ctx) const {
  CallOptions options;
  options.timeout = absl::Milliseconds(server_->def().timeout_ms);
  options.cancelled = ctx.cancelled;
  if (ctx.on_output) {
    auto out = ctx.on_output;
    options.on_progress = [out](const Json& params) { out(ProgressLine(params), false); };
  }
  absl::StatusOr<Json> result = server_->Call(info_.name, args, options);
  const std::string& server = server_->def().name;
  if (!result.ok()) {
    const absl::Status& s = result.status();
    if (absl::IsCancelled(s)) {
      return {"Cancelled by the user; the MCP server was told to stop the call.", true};
    }
    if (absl::IsDeadlineExceeded(s)) {
      return {absl::StrCat("The MCP server ", server, " did not answer within ",
                           server_->def().timeout_ms / 1000.0,
                           " s; the call was cancelled. Its effects, if any, are unknown."),
              true};
    }
    if (absl::IsUnknown(s)) {  // a JSON-RPC error answer
      return {absl::StrCat("The MCP server ", server, " refused the call: ", s.message()), true};
    }
    return {absl::StrCat("The MCP server ", server, " is not available: ", s.message()), true};
  }
  RenderedResult rendered = RenderCallResult(*result);
  tools::OutputCap cap(kHeadBytes, kTailBytes);
  cap.Append(rendered.text);
  return {cap.Render(), rendered.is_error};
}

}  // namespace agent::daemon::mcp
