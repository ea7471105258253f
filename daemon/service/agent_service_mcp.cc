// The MCP RPCs: what `agent mcp ls` and /mcp show, and a person's approval of a server the
// project defines (daemon/mcp/registry.h).

#include <atomic>
#include <string>

#include "common/grpc_status.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/reaction_scope.h"
#include "daemon/service/agent_service.h"
#include "daemon/service/peer_origin.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

}  // namespace

grpc::ServerUnaryReactor* AgentService::ListMcpServers(grpc::CallbackServerContext* ctx,
                                                       const v1::ListMcpServersRequest* req,
                                                       v1::ListMcpServersResponse* resp) {
  ReactionScope reaction;
  if (mcp_ == nullptr) return FinishUnary(ctx, absl::UnavailableError("MCP is not available"));
  absl::StatusOr<std::string> project = ProjectDirectory(req->workdir());
  if (!project.ok()) return FinishUnary(ctx, project.status());
  if (!req->check()) {
    for (v1::McpServer& s : mcp_->List(*project)) *resp->add_servers() = std::move(s);
    return FinishUnary(ctx, absl::OkStatus());
  }
  // Starting servers waits for each one's startup timeout at most: off the gRPC threads.
  auto* reactor = ctx->DefaultReactor();
  bool queued = workers_.Submit([mcp = mcp_, project = *project, resp, reactor] {
    static const std::atomic<bool> kNeverCancelled{false};
    // Problems show in the listing's states and errors, not as a session's notices.
    mcp->ToolsFor(project, "agent mcp ls --check", &kNeverCancelled, [](const std::string&) {});
    for (v1::McpServer& s : mcp->List(project)) *resp->add_servers() = std::move(s);
    reactor->Finish(grpc::Status::OK);
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::ApproveMcpServer(grpc::CallbackServerContext* ctx,
                                                         const v1::ApproveMcpServerRequest* req,
                                                         v1::ApproveMcpServerResponse*) {
  ReactionScope reaction;
  if (absl::Status t = RefuseToolProcess(*ctx, "approve an MCP server"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  if (mcp_ == nullptr) return FinishUnary(ctx, absl::UnavailableError("MCP is not available"));
  absl::StatusOr<std::string> project = ProjectDirectory(req->workdir());
  if (!project.ok()) return FinishUnary(ctx, project.status());
  // The approval is written to the person's state directory.
  return OnDisk(ctx, [mcp = mcp_, project = *project, req] {
    return mcp->Approve(project, req->name(), req->target(), req->definition());
  });
}

grpc::ServerUnaryReactor* AgentService::SetSessionMcpServers(
    grpc::CallbackServerContext* ctx, const v1::SetSessionMcpServersRequest* req,
    v1::SetSessionMcpServersResponse*) {
  ReactionScope reaction;
  // Servers run unconfined as the person's own: a program a tool started must not add one.
  if (absl::Status t = RefuseToolProcess(*ctx, "add MCP servers"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  if (mcp_ == nullptr) return FinishUnary(ctx, absl::UnavailableError("MCP is not available"));
  Json servers = Json::object();
  if (!req->servers_json().empty()) {
    absl::StatusOr<Json> parsed = ParseJson(req->servers_json());
    if (!parsed.ok() || !parsed->is_object()) {
      return FinishUnary(ctx, absl::InvalidArgumentError(
                                  "servers_json must be a JSON object of server definitions"));
    }
    servers = *std::move(parsed);
  }
  // Replacing servers stops the ones that left: off the gRPC threads.
  return OnDisk(ctx, [sessions = sessions_, mcp = mcp_, req, servers = std::move(servers)] {
    auto s = sessions->Find(req->session_id());
    if (!s.ok()) return s.status();
    return mcp->SetSessionServers((*s)->workdir(), (*s)->id(), servers);
  });
}

}  // namespace agent::daemon
