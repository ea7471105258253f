// AgentService's project-context RPCs: GetContext.
#include "common/grpc_status.h"
#include "daemon/agent_service.h"

namespace agent::daemon {

grpc::ServerUnaryReactor* AgentService::GetContext(grpc::CallbackServerContext* ctx,
                                                   const agent::v1::GetContextRequest* req,
                                                   agent::v1::ContextReport* resp) {
  auto s = sessions_->Find(req->session_id());
  if (s.ok()) *resp = (*s)->ContextReport();
  auto* r = ctx->DefaultReactor();
  r->Finish(ToGrpcStatus(s.status()));
  return r;
}

}  // namespace agent::daemon
