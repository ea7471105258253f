// AgentService's project-context RPCs: GetContext.
#include "common/grpc_status.h"
#include "common/reaction_scope.h"
#include "daemon/service/agent_service.h"

namespace agent::daemon {

grpc::ServerUnaryReactor* AgentService::GetContext(grpc::CallbackServerContext* ctx,
                                                   const agent::v1::GetContextRequest* req,
                                                   agent::v1::ContextReport* resp) {
  ReactionScope reaction;
  // The report reads the project's instruction files.
  return OnDisk(ctx, [sessions = sessions_, req, resp]() -> absl::Status {
    auto s = sessions->Find(req->session_id());
    if (s.ok()) *resp = (*s)->ContextReport();
    return s.status();
  });
}

}  // namespace agent::daemon
