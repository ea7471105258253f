// RunSandboxed: `agent sandbox [--network] -- CMD…` and `agent sandbox --check`. The command
// runs as the bash tool runs one (daemon/tools/bash_tool.cc): `bwrap … -- /bin/bash -c` in the
// project, with the client's environment filtered by the tool_env policy and the agent sockets
// removed, git's control files protected and the network through a proxy of its own when the
// user allows domains (sandbox/confined_command.h), each connection a line of the output.
// Never unconfined: where the sandbox cannot start, FAILED_PRECONDITION with the fix.
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/mutex.h"
#include "common/paths.h"
#include "common/reaction_scope.h"
#include "common/tool_env.h"
#include "daemon/sandbox/confined_command.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/service/agent_service.h"
#include "daemon/tools/subprocess.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

constexpr int kMaxTimeoutS = 3600;

// One bash word for `arg`: single-quoted unless it is plainly safe.
std::string ShellQuote(const std::string& arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    plain = plain && (absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                      std::string_view("-_./=:,+@%").find(c) != std::string_view::npos);
  }
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> Environment(const v1::ToolEnvironment& env, const Config& config) {
  if (env.variables().empty()) return {};  // the minimal one, as for a session without a client
  const ToolEnvPolicy sent{{env.keep().begin(), env.keep().end()},
                           {env.drop().begin(), env.drop().end()}};
  return BuildToolEnvironment({env.variables().begin(), env.variables().end()},
                              MergeToolEnvPolicy(sent, config.tool_env));
}

absl::Status Run(const sandbox::Sandbox& box, const Config& config,
                 const v1::RunSandboxedRequest& req, v1::RunSandboxedResponse* resp) {
  absl::StatusOr<std::string> project = ProjectDirectory(req.workdir());
  if (!project.ok()) return project.status();
  std::string command;
  for (const std::string& a : req.argv())
    absl::StrAppend(&command, command.empty() ? "" : " ", ShellQuote(a));
  if (command.empty()) return absl::InvalidArgumentError("no command: agent sandbox -- CMD ARGS…");
  tools::SubprocessOptions options;
  options.command = command;
  options.cwd = DirectoryInside(*project, req.cwd());
  options.env = sandbox::SandboxEnvironment(Environment(req.tool_env(), config));
  // The person sees each connection in the output, as the model's clients do.
  auto shown = std::make_shared<Mutex>();
  auto network_lines = std::make_shared<std::string>();
  absl::StatusOr<sandbox::ConfinedCommand> confined =
      sandbox::PrepareConfined(box, *project, options.cwd, command, req.network(),
                               [shown, network_lines](const sandbox::ProxyEvent& e) {
                                 MutexLock l(shown.get());
                                 absl::StrAppend(network_lines.get(), sandbox::ProxyEventLine(e));
                               });
  if (!confined.ok()) return confined.status();
  options.argv = std::move(confined->argv);
  const int timeout_s = req.timeout_s() > 0 ? req.timeout_s() : config.bash_timeout_s;
  options.timeout = std::chrono::seconds(std::min(timeout_s, kMaxTimeoutS));
  absl::StatusOr<tools::SubprocessResult> r = tools::RunSubprocess(options);
  const std::string after = confined->after();  // the proxy has ended: no more lines
  if (!r.ok()) return r.status();
  resp->set_exit_code(r->exited ? r->exit_code : 128 + r->term_signal);
  resp->set_term_signal(r->term_signal);
  std::string output = std::move(r->output);
  absl::StrAppend(&output, *network_lines);
  if (r->timed_out) absl::StrAppend(&output, "[timed out after ", timeout_s, " s]\n");
  if (!after.empty()) absl::StrAppend(&output, after, "\n");
  resp->set_output(std::move(output));
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::RunSandboxed(grpc::CallbackServerContext* ctx,
                                                     const v1::RunSandboxedRequest* req,
                                                     v1::RunSandboxedResponse* resp) {
  ReactionScope reaction;
  if (sandbox_ == nullptr) return FinishUnary(ctx, absl::UnavailableError("no sandbox here"));
  resp->set_sandbox(sandbox_->Describe());
  resp->set_confines(sandbox_->Confines());
  resp->set_problem(sandbox_->Problem());
  for (const std::string& h : sandbox_->policy().hide) resp->add_hidden(h);
  if (req->check()) return FinishUnary(ctx, absl::OkStatus());
  if (!sandbox_->Confines()) {
    return FinishUnary(
        ctx, absl::FailedPreconditionError(
                 sandbox_->policy().mode == sandbox::SandboxMode::kOff
                     ? std::string("the sandbox is off (\"sandbox\": \"off\" in config.json or "
                                   "AGENT_SANDBOX=off): nothing was run")
                     : absl::StrCat("the sandbox cannot start: ", sandbox_->Problem())));
  }
  auto* reactor = ctx->DefaultReactor();
  // A command may run for a while: off the gRPC threads.
  bool queued = workers_.Submit([box = sandbox_, config = sessions_->config(), req, resp, reactor] {
    reactor->Finish(ToGrpcStatus(Run(*box, config, *req, resp)));
  });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

}  // namespace agent::daemon
