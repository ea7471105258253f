#include "daemon/service/agent_service.h"

#include <unistd.h>

#include "common/clock.h"
#include "common/grpc_status.h"
#include "common/protocol.h"
#include "common/reaction_scope.h"
#include "common/version.h"
#include "daemon/checkpoints/shadow_store.h"
#include "daemon/llm/model_list.h"
#include "daemon/service/attach_reactor.h"
#include "daemon/service/peer_origin.h"
#include "daemon/session/answer_origin.h"

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

grpc::ServerUnaryReactor* AgentService::OnDisk(grpc::CallbackServerContext* ctx,
                                               std::function<absl::Status()> work) {
  auto* reactor = ctx->DefaultReactor();
  bool queued = disk_workers_.Submit(
      [work = std::move(work), reactor] { reactor->Finish(ToGrpcStatus(work())); });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::WithSession(grpc::CallbackServerContext* ctx,
                                                    const std::string& id, SessionWork then) {
  if (std::shared_ptr<Session> loaded = sessions_->FindLoaded(id)) {
    auto* reactor = ctx->DefaultReactor();
    then(std::move(loaded), reactor);
    return reactor;
  }
  return OnDiskWithSession(ctx, id, std::move(then));
}

grpc::ServerUnaryReactor* AgentService::OnDiskWithSession(grpc::CallbackServerContext* ctx,
                                                          const std::string& id, SessionWork then) {
  auto* reactor = ctx->DefaultReactor();
  bool queued = disk_workers_.Submit([sessions = sessions_, id, then = std::move(then), reactor] {
    auto s = sessions->Find(id);
    if (!s.ok()) return reactor->Finish(ToGrpcStatus(s.status()));
    then(*std::move(s), reactor);
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
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
  ReactionScope reaction;
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
  ReactionScope reaction;
  // Sessions that are not loaded are read from their files.
  return OnDisk(ctx, [sessions = sessions_, req, resp] {
    for (v1::Session& s : sessions->List(req->workdir(), req->all())) {
      *resp->add_sessions() = std::move(s);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AgentService::GetSession(grpc::CallbackServerContext* ctx,
                                                   const v1::GetSessionRequest* req,
                                                   v1::GetSessionResponse* resp) {
  ReactionScope reaction;
  return WithSession(ctx, req->id(), [resp](std::shared_ptr<Session> s, auto* reactor) {
    *resp->mutable_session() = s->Info();
    resp->set_transcript_json(s->TranscriptJson());
    for (auto& f : s->InstructionFiles()) *resp->add_instructions() = std::move(f);
    reactor->Finish(grpc::Status::OK);
  });
}

grpc::ServerWriteReactor<v1::Event>* AgentService::Attach(grpc::CallbackServerContext* ctx,
                                                          const v1::AttachRequest* req) {
  ReactionScope reaction;
  if (req->protocol_version() != 0 && req->protocol_version() != kProtocolVersion) {
    return new RefusedStream(absl::FailedPreconditionError(
        "protocol version mismatch: restart the daemon (agent daemon stop) after upgrading"));
  }
  if (std::shared_ptr<Session> loaded = sessions_->FindLoaded(req->session_id())) {
    return new AttachReactor(std::move(loaded), *req, &disk_workers_);
  }
  // Reading the session from disk (or waiting for another call's load): on a disk worker.
  auto* reactor = new AttachReactor(*req, &disk_workers_);
  bool queued = disk_workers_.Submit([sessions = sessions_, id = req->session_id(), reactor] {
    auto s = sessions->Find(id);
    if (s.ok()) {
      reactor->Start(*std::move(s));
    } else {
      reactor->Refuse(ToGrpcStatus(s.status()));
    }
  });
  if (!queued) reactor->Refuse(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::SendPrompt(grpc::CallbackServerContext* ctx,
                                                   const v1::SendPromptRequest* req,
                                                   v1::SendPromptResponse* resp) {
  ReactionScope reaction;
  auto send = [req, resp](const std::shared_ptr<Session>& session,
                          PromptExpansion expansion) -> absl::Status {
    absl::StatusOr<std::vector<std::string>> images = PromptImageUrls(req->images());
    if (!images.ok()) return images.status();
    expansion.image_urls = *std::move(images);
    for (const std::string& w : expansion.warnings) resp->add_warnings(w);
    if (req->delivery() == v1::PROMPT_DELIVERY_STEER) {
      absl::StatusOr<bool> steered = session->Steer(req->text(), req->client_name(), expansion);
      if (!steered.ok() || *steered) {
        resp->set_steered(steered.ok());
        return steered.status();
      }
    }
    auto pos = session->SendPrompt(req->text(), req->client_name(), FromProto(req->model()),
                                   req->tool_env(), std::move(expansion), req->settings());
    if (pos.ok()) resp->set_queue_position(*pos);
    return pos.status();
  };
  // Appending the prompt saves the session; custom commands and @mentions read files, images
  // are encoded: all off the gRPC threads.
  return OnDiskWithSession(
      ctx, req->session_id(), [req, send](std::shared_ptr<Session> session, auto* reactor) {
        reactor->Finish(ToGrpcStatus(
            send(session, req->expand() ? session->ExpandPrompt(req->text()) : PromptExpansion{})));
      });
}

grpc::ServerUnaryReactor* AgentService::ProvideFileText(grpc::CallbackServerContext* ctx,
                                                        const v1::ProvideFileTextRequest* req,
                                                        v1::ProvideFileTextResponse*) {
  ReactionScope reaction;
  // What the model reads as the person's own text: not from a program a tool started.
  if (absl::Status t = RefuseToolProcess(*ctx, "answer for an editor"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  return WithSession(ctx, req->session_id(), [req](std::shared_ptr<Session> s, auto* reactor) {
    reactor->Finish(ToGrpcStatus(s->ProvideFileText(req->request_id(), req->found(), req->text())));
  });
}

grpc::ServerUnaryReactor* AgentService::Approve(grpc::CallbackServerContext* ctx,
                                                const v1::ApproveRequest* req,
                                                v1::ApproveResponse* resp) {
  ReactionScope reaction;
  if (absl::Status t = RefuseToolProcess(*ctx, "answer approvals"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  const bool person = AnsweredByPerson(*ctx);
  // An answer may save a rule and lets the turn go on, which saves the session.
  return OnDiskWithSession(
      ctx, req->session_id(), [this, req, person](std::shared_ptr<Session> target, auto* reactor) {
        std::vector<std::string> rules(req->rules().begin(), req->rules().end());
        PersonAnswerScope scope(person);  // for ApprovalGate::Resolve, on this thread
        absl::Status st = target->Approve(req->call_id(), req->decision(), rules, req->reason(),
                                          req->client_name());
        // A child's call shown to its parent's clients (the `task` tool): the child answers it, or
        // its own child, one hop per level (bounded: levels are capped in the config). A child
        // with a pending call runs, so it is loaded.
        for (int hop = 0; hop < kMaxSubagentDepth && absl::IsFailedPrecondition(st); ++hop) {
          std::string child = target->ChildApprovalOwner(req->call_id());
          if (child.empty()) break;
          std::shared_ptr<Session> c = sessions_->FindLoaded(child);
          if (c == nullptr) break;
          target = std::move(c);
          st = target->Approve(req->call_id(), req->decision(), rules, req->reason(),
                               req->client_name());
        }
        reactor->Finish(ToGrpcStatus(st));
      });
}

grpc::ServerUnaryReactor* AgentService::Cancel(grpc::CallbackServerContext* ctx,
                                               const v1::CancelRequest* req,
                                               v1::CancelResponse* resp) {
  ReactionScope reaction;
  return WithSession(ctx, req->session_id(),
                     [req, resp](std::shared_ptr<Session> s, auto* reactor) {
                       auto was = s->Cancel(req->client_name());
                       if (was.ok()) resp->set_was_running(*was);
                       reactor->Finish(ToGrpcStatus(was.status()));
                     });
}

grpc::ServerUnaryReactor* AgentService::Compact(grpc::CallbackServerContext* ctx,
                                                const v1::CompactRequest* req,
                                                v1::CompactResponse* resp) {
  ReactionScope reaction;
  return WithSession(
      ctx, req->session_id(), [this, resp](std::shared_ptr<Session> s, auto* reactor) {
        // The summary request can take a while: wait for it off the gRPC threads.
        bool queued = workers_.Submit([session = std::move(s), reactor, resp] {
          auto n = session->Compact();
          if (n.ok()) resp->set_removed_messages(*n);
          reactor->Finish(ToGrpcStatus(n.status()));
        });
        if (!queued)
          reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
      });
}

grpc::ServerUnaryReactor* AgentService::ForkSession(grpc::CallbackServerContext* ctx,
                                                    const v1::ForkSessionRequest* req,
                                                    v1::Session* resp) {
  ReactionScope reaction;
  // Copies the session's files (and may restore the project's with git).
  return OnDisk(ctx, [sessions = sessions_, req, resp]() -> absl::Status {
    if (req->restore_files() && req->at_message() > 0) {
      // The files first: a restore that is refused (a turn runs, files changed since) forks
      // nothing.
      auto source = sessions->Find(req->session_id());
      if (!source.ok()) return source.status();
      if (auto r = (*source)->RestoreFilesFrom(req->at_message(), "rewind"); !r.ok()) {
        return r.status();
      }
    }
    auto s = sessions->Fork(req->session_id(), req->at_message());
    if (s.ok()) *resp = (*s)->Info();
    return s.status();
  });
}

grpc::ServerUnaryReactor* AgentService::DeleteSession(grpc::CallbackServerContext* ctx,
                                                      const v1::DeleteSessionRequest* req,
                                                      v1::DeleteSessionResponse* resp) {
  ReactionScope reaction;
  return OnDisk(ctx, [sessions = sessions_, req] {
    return sessions->Delete(req->session_id(), req->client_name());
  });
}

grpc::ServerUnaryReactor* AgentService::SetPolicy(grpc::CallbackServerContext* ctx,
                                                  const v1::SetPolicyRequest* req,
                                                  v1::SetPolicyResponse* resp) {
  ReactionScope reaction;
  if (absl::Status t = RefuseToolProcess(*ctx, "change a session's policy"); !t.ok()) {
    return FinishUnary(ctx, t);
  }
  // The rules it adds are written to the settings file, the mode to the session's meta.
  return OnDiskWithSession(
      ctx, req->session_id(), [req](std::shared_ptr<Session> s, auto* reactor) {
        std::vector<std::string> allow(req->add_allow().begin(), req->add_allow().end());
        absl::Status st = s->SetPolicy(req->mode(), allow, req->client_name());
        if (st.ok()) s->SetModel(req->model());
        reactor->Finish(ToGrpcStatus(st));
      });
}

grpc::ServerUnaryReactor* AgentService::DaemonStatus(grpc::CallbackServerContext* ctx,
                                                     const v1::DaemonStatusRequest* req,
                                                     v1::DaemonStatusResponse* resp) {
  ReactionScope reaction;
  resp->set_pid(::getpid());
  resp->set_uptime_ms(absl::ToInt64Milliseconds(MonotonicNow() - started_));
  resp->set_sessions_loaded(sessions_->loaded_count());
  resp->set_clients_attached(sessions_->attached_count());
  resp->set_version(kVersion);
  resp->set_protocol_version(kProtocolVersion);
  resp->set_epoch(epoch_);
  resp->set_socket_activated(socket_activated_);
  if (sandbox_ != nullptr) {
    resp->set_sandbox(sandbox_->Describe());
    resp->set_sandbox_confines(sandbox_->Confines());
  }
  // The rule files are read, the checkpoint stores' size is a walk of their directories.
  return OnDisk(ctx, [sessions = sessions_, resp] {
    for (std::string& p : sessions->RuleProblems()) resp->add_problems(std::move(p));
    resp->set_checkpoint_store_bytes(
        static_cast<int64_t>(checkpoints::DirectoryBytes(checkpoints::StoresRoot())));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AgentService::ListModels(grpc::CallbackServerContext* ctx,
                                                   const v1::ListModelsRequest* req,
                                                   v1::ListModelsResponse* resp) {
  ReactionScope reaction;
  auto list = [this, req, resp](const ModelSettings& fallback, grpc::ServerUnaryReactor* reactor) {
    ModelSettings settings = MergeModelSettings(FromProto(req->model()), fallback);
    const int connect_ms = sessions_->config().connect_timeout_ms;
    bool queued = workers_.Submit([settings = std::move(settings), connect_ms, reactor, resp] {
      llm::ModelList list = llm::ListProviderModels(settings, connect_ms, kListModelsTimeoutMs);
      for (std::string& m : list.models) resp->add_models(std::move(m));
      resp->set_message(std::move(list.message));
      reactor->Finish(grpc::Status::OK);
    });
    if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  };
  if (req->session_id().empty()) {
    auto* reactor = ctx->DefaultReactor();
    list(sessions_->config().model, reactor);
    return reactor;
  }
  return WithSession(ctx, req->session_id(), [list](std::shared_ptr<Session> s, auto* reactor) {
    list(s->model_settings(), reactor);
  });
}

grpc::ServerUnaryReactor* AgentService::Shutdown(grpc::CallbackServerContext* ctx,
                                                 const v1::ShutdownRequest* req,
                                                 v1::ShutdownResponse* resp) {
  ReactionScope reaction;
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
