// AgentService::ListCommands: the custom slash commands a project sees (custom_commands.h),
// for /help and completion.
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/reaction_scope.h"
#include "daemon/prompt/custom_commands.h"
#include "daemon/service/agent_service.h"

namespace agent::daemon {

grpc::ServerUnaryReactor* AgentService::ListCommands(grpc::CallbackServerContext* ctx,
                                                     const agent::v1::ListCommandsRequest* req,
                                                     agent::v1::ListCommandsResponse* resp) {
  ReactionScope reaction;
  if (req->workdir().empty() || req->workdir()[0] != '/') {
    return FinishUnary(ctx, absl::InvalidArgumentError(absl::StrCat(
                                "workdir must be an absolute path, not \"", req->workdir(), "\"")));
  }
  // The commands are files of the project and of the person's config directory.
  return OnDisk(ctx, [req, resp] {
    for (CustomCommandFile& c : ListCustomCommands(req->workdir(), UserCommandsDir())) {
      agent::v1::CustomCommand* out = resp->add_commands();
      out->set_name(std::move(c.name));
      out->set_description(std::move(c.description));
      out->set_scope(std::move(c.scope));
      out->set_path(std::move(c.path));
    }
    return absl::OkStatus();
  });
}

}  // namespace agent::daemon
