// AgentService: the gRPC face of the daemon. Translates proto <-> SessionManager/Session
// calls and statuses; holds no logic of its own. Handlers never block a gRPC thread on the
// model: Compact, which waits for a summary, finishes from the service's worker pool, which
// StopWorkers drains at shutdown.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "agent/v1/agent.grpc.pb.h"
#include "daemon/mcp/registry.h"
#include "daemon/service/session_manager.h"
#include "daemon/service/worker_pool.h"

namespace agent::daemon {

// Ends a unary call with `s` (the handlers of every agent_service*.cc file).
grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* ctx, const absl::Status& s);

class AgentService final : public agent::v1::AgentDaemon::CallbackService {
 public:
  // `request_shutdown` is called once by the Shutdown RPC.
  AgentService(SessionManager* sessions, std::string epoch, std::function<void()> request_shutdown,
               bool socket_activated = false);

  grpc::ServerUnaryReactor* CreateSession(grpc::CallbackServerContext* ctx,
                                          const agent::v1::CreateSessionRequest* req,
                                          agent::v1::Session* resp) override;
  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* ctx,
                                         const agent::v1::ListSessionsRequest* req,
                                         agent::v1::ListSessionsResponse* resp) override;
  grpc::ServerUnaryReactor* GetSession(grpc::CallbackServerContext* ctx,
                                       const agent::v1::GetSessionRequest* req,
                                       agent::v1::GetSessionResponse* resp) override;
  grpc::ServerWriteReactor<agent::v1::Event>* Attach(grpc::CallbackServerContext* ctx,
                                                     const agent::v1::AttachRequest* req) override;
  grpc::ServerUnaryReactor* SendPrompt(grpc::CallbackServerContext* ctx,
                                       const agent::v1::SendPromptRequest* req,
                                       agent::v1::SendPromptResponse* resp) override;
  grpc::ServerUnaryReactor* ProvideFileText(grpc::CallbackServerContext* ctx,
                                            const agent::v1::ProvideFileTextRequest* req,
                                            agent::v1::ProvideFileTextResponse* resp) override;
  grpc::ServerUnaryReactor* SetSessionMcpServers(
      grpc::CallbackServerContext* ctx, const agent::v1::SetSessionMcpServersRequest* req,
      agent::v1::SetSessionMcpServersResponse* resp) override;
  grpc::ServerUnaryReactor* Approve(grpc::CallbackServerContext* ctx,
                                    const agent::v1::ApproveRequest* req,
                                    agent::v1::ApproveResponse* resp) override;
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx,
                                   const agent::v1::CancelRequest* req,
                                   agent::v1::CancelResponse* resp) override;
  grpc::ServerUnaryReactor* Compact(grpc::CallbackServerContext* ctx,
                                    const agent::v1::CompactRequest* req,
                                    agent::v1::CompactResponse* resp) override;
  grpc::ServerUnaryReactor* ForkSession(grpc::CallbackServerContext* ctx,
                                        const agent::v1::ForkSessionRequest* req,
                                        agent::v1::Session* resp) override;
  grpc::ServerUnaryReactor* DeleteSession(grpc::CallbackServerContext* ctx,
                                          const agent::v1::DeleteSessionRequest* req,
                                          agent::v1::DeleteSessionResponse* resp) override;
  grpc::ServerUnaryReactor* SetPolicy(grpc::CallbackServerContext* ctx,
                                      const agent::v1::SetPolicyRequest* req,
                                      agent::v1::SetPolicyResponse* resp) override;
  grpc::ServerUnaryReactor* DaemonStatus(grpc::CallbackServerContext* ctx,
                                         const agent::v1::DaemonStatusRequest* req,
                                         agent::v1::DaemonStatusResponse* resp) override;
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* ctx,
                                     const agent::v1::ShutdownRequest* req,
                                     agent::v1::ShutdownResponse* resp) override;
  // Asks the provider (GET /models) from the worker pool: it may take the connect timeout.
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* ctx,
                                       const agent::v1::ListModelsRequest* req,
                                       agent::v1::ListModelsResponse* resp) override;
  // agent_service_context.cc
  grpc::ServerUnaryReactor* GetContext(grpc::CallbackServerContext* ctx,
                                       const agent::v1::GetContextRequest* req,
                                       agent::v1::ContextReport* resp) override;
  // agent_service_commands.cc
  grpc::ServerUnaryReactor* ListCommands(grpc::CallbackServerContext* ctx,
                                         const agent::v1::ListCommandsRequest* req,
                                         agent::v1::ListCommandsResponse* resp) override;

  // agent_service_mcp.cc
  grpc::ServerUnaryReactor* ListMcpServers(grpc::CallbackServerContext* ctx,
                                           const agent::v1::ListMcpServersRequest* req,
                                           agent::v1::ListMcpServersResponse* resp) override;
  grpc::ServerUnaryReactor* ApproveMcpServer(grpc::CallbackServerContext* ctx,
                                             const agent::v1::ApproveMcpServerRequest* req,
                                             agent::v1::ApproveMcpServerResponse* resp) override;
  // agent_service_checkpoints.cc
  grpc::ServerUnaryReactor* Undo(grpc::CallbackServerContext* ctx,
                                 const agent::v1::UndoRequest* req,
                                 agent::v1::UndoResponse* resp) override;
  grpc::ServerUnaryReactor* Diff(grpc::CallbackServerContext* ctx,
                                 const agent::v1::DiffRequest* req,
                                 agent::v1::DiffResponse* resp) override;
  grpc::ServerUnaryReactor* ListCheckpoints(grpc::CallbackServerContext* ctx,
                                            const agent::v1::ListCheckpointsRequest* req,
                                            agent::v1::ListCheckpointsResponse* resp) override;
  // agent_service_trust.cc
  grpc::ServerUnaryReactor* TrustProjectRules(grpc::CallbackServerContext* ctx,
                                              const agent::v1::TrustProjectRulesRequest* req,
                                              agent::v1::TrustProjectRulesResponse* resp) override;

  // agent_service_sandbox.cc
  grpc::ServerUnaryReactor* RunSandboxed(grpc::CallbackServerContext* ctx,
                                         const agent::v1::RunSandboxedRequest* req,
                                         agent::v1::RunSandboxedResponse* resp) override;

  // The daemon's MCP servers; unset: the MCP RPCs answer UNAVAILABLE.
  void set_mcp(mcp::Registry* mcp) { mcp_ = mcp; }
  // How commands are confined; unset: RunSandboxed answers UNAVAILABLE.
  void set_sandbox(std::shared_ptr<const sandbox::Sandbox> s) { sandbox_ = std::move(s); }

  // Finishes the waiting calls (sessions should be shut down first, which cancels their
  // summaries) and joins the workers; later waiting calls are refused.
  void StopWorkers() {
    workers_.Stop();
    disk_workers_.Stop();
  }

 private:
  // Runs `work` on a disk worker and finishes the call with its status: what reads or writes
  // the disk (a session's files, a listing, git) never runs on a gRPC thread.
  grpc::ServerUnaryReactor* OnDisk(grpc::CallbackServerContext* ctx,
                                   std::function<absl::Status()> work);
  // Runs `then` with session `id`: at once when it is loaded, else on a disk worker once Find
  // has read it from disk (or waited for another call's load). `then` finishes the call;
  // Find's error finishes it without `then`.
  using SessionWork = std::function<void(std::shared_ptr<Session>, grpc::ServerUnaryReactor*)>;
  grpc::ServerUnaryReactor* WithSession(grpc::CallbackServerContext* ctx, const std::string& id,
                                        SessionWork then);
  // The same, always on a disk worker: for calls that change a session, which saves it (a
  // prompt, an answer, a policy and its rules).
  grpc::ServerUnaryReactor* OnDiskWithSession(grpc::CallbackServerContext* ctx,
                                              const std::string& id, SessionWork then);

  SessionManager* sessions_;
  std::string epoch_;
  std::function<void()> request_shutdown_;
  std::atomic<bool> shutdown_requested_{false};
  absl::Time started_;  // on the monotonic clock: uptime is a duration
  bool socket_activated_;
  WorkerPool workers_{2};
  // For calls that read or write files or run git (a new session's prompt, a prompt's
  // @mentions): never on a gRPC thread, and never behind a summary request in `workers_`.
  WorkerPool disk_workers_{4};
  mcp::Registry* mcp_ = nullptr;
  std::shared_ptr<const sandbox::Sandbox> sandbox_;
};

}  // namespace agent::daemon
