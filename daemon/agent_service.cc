#include "daemon/agent_service.h"

#include <unistd.h>

#include "common/clock.h"
#include "common/grpc_status.h"
#include "common/protocol.h"
#include "common/version.h"
#include "daemon/answer_origin.h"
#include "daemon/attach_reactor.h"
#include "daemon/checkpoints/shadow_store.h"
#include "daemon/llm/model_list.h"
#include "daemon/peer_origin.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

// A reactor that refuses a stream before it starts.
class RefusedStream : public grpc::ServerWriteReactor<v1::Event> {
 public:
  explicit RefusedStream(const absl::Status& s) { Finish(ToGrpcStatus(s)); }
  void OnDone() override { delete this; }
};

// A model list that takes longer is not coming.
constexpr int kListModelsTimeoutMs = 15000;

// A unary reactor that runs `then` once the call is done (its status sent).
class FinishThen : public grpc::ServerUnaryReactor {
 public:
  // The caller calls Finish.
  explicit FinishThen(std::function<void()> then) : then_(std::move(then)) {}
  void OnDone() override {
    then_();
    delete this;
  }

 private:
  std::function<void()> then_;
};

ModelSettings FromProto(const v1::ModelConfig& m) {
  return ModelSettings{m.base_url(), m.api_key(), m.model(), m.provider(), m.cache_ttl()};
}

}  // namespace

grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* ctx, const absl::Status& s) {
  auto* r = ctx->DefaultReactor();
  r->Finish(ToGrpcStatus(s));
  return r;
}

AgentService::AgentService(SessionManager* sessions, std::string epoch,
                           std::function<void()> request_shutdown, bool socket_activated)
    : sessions_(sessions),
      epoch_(std::move(epoch)),
      request_shutdown_(std::move(request_shutdown)),
      started_(MonotonicNow()),
      socket_activated_(socket_activated) {}

grpc::ServerUnaryReactor* AgentService::CreateSession(grpc::CallbackServerContext* ctx,
                                                      const v1::CreateSessionRequest* req,
                                                      v1::Session* resp) {
  auto* reactor = ctx->DefaultReactor();
  // The system prompt runs git and the first save syncs the file: off the gRPC threads.
  bool queued = disk_workers_.Submit([sessions = sessions_, req, resp, reactor] {
    auto s = sessions->Create(*req);
    if (s.ok()) *resp = (*s)->Info();
    reactor->Finish(ToGrpcStatus(s.status()));
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::ListSessions(grpc::CallbackServerContext* ctx,
                                                     const v1::ListSessionsRequest* req,
                                                     v1::ListSessionsResponse* resp) {
  for (v1::Session& s : sessions_->List(req->workdir(), req->all())) {
    *resp->add_sessions() = std::move(s);
  }
  return FinishUnary(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* AgentService::GetSession(grpc::CallbackServerContext* ctx,
                                                   const v1::GetSessionRequest* req,
                                                   v1::GetSessionResponse* resp) {
  auto s = sessions_->Find(req->id());
  if (s.ok()) {
    *resp->mutable_session() = (*s)->Info();
    resp->set_transcript_json((*s)->TranscriptJson());
    for (auto& f : (*s)->InstructionFiles()) *resp->add_instructions() = std::move(f);
  }
  return FinishUnary(ctx, s.status());
}

grpc::ServerWriteReactor<v1::Event>* AgentService::Attach(grpc::CallbackServerContext* ctx,
                                                          const v1::AttachRequest* req) {
  if (req->protocol_version() != 0 && req->protocol_version() != kProtocolVersion) {
    return new RefusedStream(absl::FailedPreconditionError(
        "protocol version mismatch: restart the daemon (agent daemon stop) after upgrading"));
  }
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return new RefusedStream(s.status());
  return new AttachReactor(*s, *req);
}

grpc::ServerUnaryReactor* AgentService::SendPrompt(grpc::CallbackServerContext* ctx,
                                                   const v1::SendPromptRequest* req,
                                                   v1::SendPromptResponse* resp) {
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return FinishUnary(ctx, s.status());
  auto send = [session = *s, req, resp](PromptExpansion expansion) {
    for (const std::string& w : expansion.warnings) resp->add_warnings(w);
    auto pos = session->SendPrompt(req->text(), req->client_name(), FromProto(req->model()),
                                   req->tool_env(), std::move(expansion), req->settings());
    if (pos.ok()) resp->set_queue_position(*pos);
    return pos.status();
  };
  if (!req->expand()) return FinishUnary(ctx, send({}));
  auto* reactor = ctx->DefaultReactor();
  // Custom commands and @mentions read files: off the gRPC threads.
  bool queued = disk_workers_.Submit([session = *s, req, reactor, send] {
    reactor->Finish(ToGrpcStatus(send(session->ExpandPrompt(req->text()))));
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::ProvideFileText(grpc::CallbackServerContext* ctx,
                                                        const v1::ProvideFileTextRequest* req,
                                                        v1::ProvideFileTextResponse*) {
  // What the model reads as the person's own text: not from a program a tool started.
  if (absl::Status t = RefuseToolProcess(*ctx, "answer for an editor"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return FinishUnary(ctx, s.status());
  return FinishUnary(ctx, (*s)->ProvideFileText(req->request_id(), req->found(), req->text()));
}

grpc::ServerUnaryReactor* AgentService::Approve(grpc::CallbackServerContext* ctx,
                                                const v1::ApproveRequest* req,
                                                v1::ApproveResponse* resp) {
  if (absl::Status t = RefuseToolProcess(*ctx, "answer approvals"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return FinishUnary(ctx, s.status());
  std::vector<std::string> rules(req->rules().begin(), req->rules().end());
  std::shared_ptr<Session> target = *s;
  PersonAnswerScope person(AnsweredByPerson(*ctx));  // for ApprovalGate::Resolve
  absl::Status st =
      target->Approve(req->call_id(), req->decision(), rules, req->reason(), req->client_name());
  // A child's call shown to its parent's clients (the `task` tool): the child answers it, or
  // its own child, one hop per level (bounded: levels are capped in the config).
  for (int hop = 0; hop < kMaxSubagentDepth && absl::IsFailedPrecondition(st); ++hop) {
    std::string child = target->ChildApprovalOwner(req->call_id());
    if (child.empty()) break;
    auto c = sessions_->Find(child);
    if (!c.ok()) return FinishUnary(ctx, c.status());
    target = *c;
    st = target->Approve(req->call_id(), req->decision(), rules, req->reason(), req->client_name());
  }
  return FinishUnary(ctx, st);
}

grpc::ServerUnaryReactor* AgentService::Cancel(grpc::CallbackServerContext* ctx,
                                               const v1::CancelRequest* req,
                                               v1::CancelResponse* resp) {
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return FinishUnary(ctx, s.status());
  auto was = (*s)->Cancel(req->client_name());
  if (was.ok()) resp->set_was_running(*was);
  return FinishUnary(ctx, was.status());
}

grpc::ServerUnaryReactor* AgentService::Compact(grpc::CallbackServerContext* ctx,
                                                const v1::CompactRequest* req,
                                                v1::CompactResponse* resp) {
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return FinishUnary(ctx, s.status());
  auto* reactor = ctx->DefaultReactor();
  // The summary request can take a while: wait for it off the gRPC threads.
  bool queued = workers_.Submit([session = *s, reactor, resp] {
    auto n = session->Compact();
    if (n.ok()) resp->set_removed_messages(*n);
    reactor->Finish(ToGrpcStatus(n.status()));
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::ForkSession(grpc::CallbackServerContext* ctx,
                                                    const v1::ForkSessionRequest* req,
                                                    v1::Session* resp) {
  if (req->restore_files() && req->at_message() > 0) {
    // The files first: a restore that is refused (a turn runs, files changed since) forks
    // nothing. Runs git, like Undo, but a rewind is rare enough for a gRPC thread.
    auto source = sessions_->Find(req->session_id());
    if (!source.ok()) return FinishUnary(ctx, source.status());
    if (auto r = (*source)->RestoreFilesFrom(req->at_message(), "rewind"); !r.ok()) {
      return FinishUnary(ctx, r.status());
    }
  }
  auto s = sessions_->Fork(req->session_id(), req->at_message());
  if (s.ok()) *resp = (*s)->Info();
  return FinishUnary(ctx, s.status());
}

grpc::ServerUnaryReactor* AgentService::DeleteSession(grpc::CallbackServerContext* ctx,
                                                      const v1::DeleteSessionRequest* req,
                                                      v1::DeleteSessionResponse* resp) {
  return FinishUnary(ctx, sessions_->Delete(req->session_id(), req->client_name()));
}

grpc::ServerUnaryReactor* AgentService::SetPolicy(grpc::CallbackServerContext* ctx,
                                                  const v1::SetPolicyRequest* req,
                                                  v1::SetPolicyResponse* resp) {
  if (absl::Status t = RefuseToolProcess(*ctx, "change a session's policy"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  auto s = sessions_->Find(req->session_id());
  if (!s.ok()) return FinishUnary(ctx, s.status());
  std::vector<std::string> allow(req->add_allow().begin(), req->add_allow().end());
  absl::Status st = (*s)->SetPolicy(req->mode(), allow, req->client_name());
  if (st.ok()) (*s)->SetModel(req->model());
  return FinishUnary(ctx, st);
}

grpc::ServerUnaryReactor* AgentService::DaemonStatus(grpc::CallbackServerContext* ctx,
                                                     const v1::DaemonStatusRequest* req,
                                                     v1::DaemonStatusResponse* resp) {
  resp->set_pid(::getpid());
  resp->set_uptime_ms(absl::ToInt64Milliseconds(MonotonicNow() - started_));
  resp->set_sessions_loaded(sessions_->loaded_count());
  resp->set_clients_attached(sessions_->attached_count());
  resp->set_version(kVersion);
  resp->set_protocol_version(kProtocolVersion);
  resp->set_epoch(epoch_);
  resp->set_socket_activated(socket_activated_);
  for (std::string& p : sessions_->RuleProblems()) resp->add_problems(std::move(p));
  resp->set_checkpoint_store_bytes(
      static_cast<int64_t>(checkpoints::DirectoryBytes(checkpoints::StoresRoot())));
  if (sandbox_ != nullptr) {
    resp->set_sandbox(sandbox_->Describe());
    resp->set_sandbox_confines(sandbox_->Confines());
  }
  return FinishUnary(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* AgentService::ListModels(grpc::CallbackServerContext* ctx,
                                                   const v1::ListModelsRequest* req,
                                                   v1::ListModelsResponse* resp) {
  ModelSettings fallback = sessions_->config().model;
  if (!req->session_id().empty()) {
    auto s = sessions_->Find(req->session_id());
    if (!s.ok()) return FinishUnary(ctx, s.status());
    fallback = (*s)->model_settings();
  }
  ModelSettings settings = MergeModelSettings(FromProto(req->model()), fallback);
  const int connect_ms = sessions_->config().connect_timeout_ms;
  auto* reactor = ctx->DefaultReactor();
  bool queued = workers_.Submit([settings = std::move(settings), connect_ms, reactor, resp] {
    llm::ModelList list = llm::ListProviderModels(settings, connect_ms, kListModelsTimeoutMs);
    for (std::string& m : list.models) resp->add_models(std::move(m));
    resp->set_message(std::move(list.message));
    reactor->Finish(grpc::Status::OK);
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::Shutdown(grpc::CallbackServerContext* ctx,
                                                 const v1::ShutdownRequest* req,
                                                 v1::ShutdownResponse* resp) {
  if (shutdown_requested_.exchange(true)) return FinishUnary(ctx, absl::OkStatus());
  // The daemon stops once this call is done: a shutdown that began while it was still in
  // flight would wait for it until the deadline.
  auto* reactor = new FinishThen(request_shutdown_);
  // First a last try at what a failed save left unwritten, off the gRPC threads: the person
  // stopping the daemon is told which session it could not save.
  bool queued = disk_workers_.Submit([sessions = sessions_, resp, reactor] {
    for (std::string& u : sessions->SaveUnsavedNow()) resp->add_unsaved(std::move(u));
    reactor->Finish(grpc::Status::OK);
  });
  if (!queued) reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace agent::daemon
