// Undo, Diff, ListCheckpoints: the session's file checkpoints over the API. The restore and
// the diff run git on the project: they finish from the service's worker pool.
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/reaction_scope.h"
#include "common/utf8.h"
#include "daemon/service/agent_service.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

// A gRPC message's default limit is 4 MiB: a larger diff is cut, saying so.
constexpr size_t kMaxDiffBytes = 3 << 20;

std::string CappedDiff(std::string diff) {
  const size_t total = diff.size();
  if (total > kMaxDiffBytes) {
    diff.resize(kMaxDiffBytes);
    diff = diff.substr(0, diff.rfind('\n') + 1);
    absl::StrAppend(&diff, "[diff cut here: ", total - diff.size(), " more bytes]\n");
  }
  return ToValidUtf8(diff);  // files need not be UTF-8
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::Undo(grpc::CallbackServerContext* ctx,
                                             const v1::UndoRequest* req, v1::UndoResponse* resp) {
  ReactionScope reaction;
  if (req->turns() < 0)
    return FinishUnary(ctx, absl::InvalidArgumentError("turns must be 0 or more"));
  return WithSession(
      ctx, req->session_id(), [this, req, resp](std::shared_ptr<Session> session, auto* reactor) {
        bool queued = workers_.Submit([session, req, resp, reactor] {
          auto r =
              session->Undo(req->turns(), req->dry_run(), req->overwrite(), req->client_name());
          if (r.ok()) {
            for (v1::FileChange& f : r->files) {
              f.set_path(ToValidUtf8(f.path()));  // a repository's file name need not be UTF-8
              *resp->add_files() = std::move(f);
            }
            resp->set_restored(r->restored);
            resp->set_message(ToValidUtf8(r->message));
          }
          reactor->Finish(ToGrpcStatus(r.status()));
        });
        if (!queued)
          reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
      });
}

grpc::ServerUnaryReactor* AgentService::Diff(grpc::CallbackServerContext* ctx,
                                             const v1::DiffRequest* req, v1::DiffResponse* resp) {
  ReactionScope reaction;
  if (req->turn() < 0)
    return FinishUnary(ctx, absl::InvalidArgumentError("turn must be 0 or more"));
  return WithSession(
      ctx, req->session_id(), [this, req, resp](std::shared_ptr<Session> session, auto* reactor) {
        bool queued = workers_.Submit([session, turn = req->turn(), resp, reactor] {
          auto d = session->FilesDiff(turn);
          if (d.ok()) resp->set_unified_diff(CappedDiff(*std::move(d)));
          reactor->Finish(ToGrpcStatus(d.status()));
        });
        if (!queued)
          reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
      });
}

grpc::ServerUnaryReactor* AgentService::ListCheckpoints(grpc::CallbackServerContext* ctx,
                                                        const v1::ListCheckpointsRequest* req,
                                                        v1::ListCheckpointsResponse* resp) {
  ReactionScope reaction;
  // The checkpoint log is read from its file.
  return OnDisk(ctx, [sessions = sessions_, req, resp]() -> absl::Status {
    auto s = sessions->Find(req->session_id());
    if (!s.ok()) return s.status();
    for (const checkpoints::CheckpointRecord& r : (*s)->ListCheckpoints()) {
      v1::Checkpoint* c = resp->add_checkpoints();
      c->set_turn(r.turn);
      c->set_at_message(r.at_message);
      c->set_unix_ms(r.unix_ms);
      c->set_prompt(r.prompt);
      c->set_files_changed(r.files_changed);
    }
    return absl::OkStatus();
  });
}

}  // namespace agent::daemon
