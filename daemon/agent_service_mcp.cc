// The MCP RPCs: what `agent mcp ls` and /mcp show, and a person's approval of a server the
// project defines (daemon/mcp/registry.h).
#include <filesystem>

#include "common/grpc_status.h"
#include "common/paths.h"
#include "daemon/agent_service.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx, const absl::Status& s) {
  auto* r = ctx->DefaultReactor();
  r->Finish(ToGrpcStatus(s));
  return r;
}

// The project directory as sessions know it (canonical), or InvalidArgument.
absl::StatusOr<std::string> Project(const std::string& workdir) {
  if (workdir.empty() || workdir[0] != '/') {
    return absl::InvalidArgumentError("workdir must be an absolute path");
  }
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(workdir, ec).string();
  if (ec || !std::filesystem::is_directory(canonical, ec)) {
    return absl::InvalidArgumentError("not a directory: " + workdir);
  }
  return canonical;
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::ListMcpServers(grpc::CallbackServerContext* ctx,
                                                       const v1::ListMcpServersRequest* req,
                                                       v1::ListMcpServersResponse* resp) {
  if (mcp_ == nullptr) return Finish(ctx, absl::UnavailableError("MCP is not available"));
  absl::StatusOr<std::string> project = Project(req->workdir());
  if (!project.ok()) return Finish(ctx, project.status());
  for (v1::McpServer& s : mcp_->List(*project)) *resp->add_servers() = std::move(s);
  return Finish(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* AgentService::ApproveMcpServer(grpc::CallbackServerContext* ctx,
                                                         const v1::ApproveMcpServerRequest* req,
                                                         v1::ApproveMcpServerResponse*) {
  if (mcp_ == nullptr) return Finish(ctx, absl::UnavailableError("MCP is not available"));
  absl::StatusOr<std::string> project = Project(req->workdir());
  if (!project.ok()) return Finish(ctx, project.status());
  return Finish(ctx, mcp_->Approve(*project, req->name(), req->target(), req->definition()));
}

}  // namespace agent::daemon
