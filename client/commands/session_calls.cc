#include "client/commands/session_calls.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "client/link/remote.h"
#include "client/text/child_view.h"
#include "common/config.h"
#include "common/grpc_status.h"
#include "common/tool_env.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

}  // namespace

v1::ModelConfig ModelFromEnv(const std::string& model) {
  ModelSettings m = ModelSettingsFromEnv();
  v1::ModelConfig c;
  c.set_base_url(m.base_url);
  c.set_api_key(m.api_key);
  c.set_model(model.empty() ? m.model : model);
  c.set_provider(m.provider);
  c.set_cache_ttl(m.cache_ttl);
  return c;
}

v1::SendPromptRequest PromptRequest(const std::string& session_id, const std::string& text,
                                    const ClientOptions& options, const std::string& model) {
  v1::SendPromptRequest req;
  req.set_session_id(session_id);
  req.set_text(text);
  req.set_client_name(options.client_name);
  *req.mutable_model() = ModelFromEnv(model);
  *req.mutable_tool_env() = ToolEnvFromProcess();
  *req.mutable_settings() = options.settings;
  return req;
}

v1::ToolEnvironment ToolEnvFromProcess() {
  // A session on another host runs its tools with that host's login environment.
  if (std::optional<v1::ToolEnvironment> remote = RemoteToolEnvironment()) return *remote;
  // A config.json that does not parse still leaves the built-in drops; the daemon, which
  // reads the same file, is the one to report it.
  absl::StatusOr<Config> config = LoadConfig();
  ToolEnvPolicy policy = config.ok() ? config->tool_env : ToolEnvPolicy{};
  std::vector<std::string> vars = BuildToolEnvironment(ProcessEnvironment(), policy);
  DropEntriesWithValue(&vars, config.ok() ? config->model.api_key : ModelSettingsFromEnv().api_key);
  v1::ToolEnvironment e;
  for (std::string& v : vars) e.add_variables(std::move(v));
  for (const std::string& g : policy.keep) e.add_keep(g);
  for (const std::string& g : policy.drop) e.add_drop(g);
  return e;
}

absl::StatusOr<v1::Session> CreateSessionHere(v1::AgentDaemon::Stub& stub, const ClientOptions& o,
                                              v1::PolicyMode mode) {
  grpc::ClientContext ctx;
  v1::CreateSessionRequest req;
  req.set_workdir(o.project.root);
  req.set_cwd(o.project.cwd);
  *req.mutable_model() = ModelFromEnv(o.model);
  *req.mutable_tool_env() = ToolEnvFromProcess();
  *req.mutable_settings() = o.settings;
  req.set_max_steps(o.settings.max_steps());  // what a daemon older than ClientSettings reads
  req.set_policy(mode);
  req.set_title(o.title);
  v1::Session s;
  grpc::Status st = stub.CreateSession(&ctx, req, &s);
  if (!st.ok()) return FromGrpcStatus(st);
  return s;
}

absl::StatusOr<std::vector<v1::Session>> SessionsOf(v1::AgentDaemon::Stub& stub,
                                                    const std::string& project_root) {
  grpc::ClientContext ctx;
  v1::ListSessionsRequest req;
  req.set_workdir(project_root);
  v1::ListSessionsResponse resp;
  grpc::Status st = stub.ListSessions(&ctx, req, &resp);
  if (!st.ok()) return FromGrpcStatus(st);
  std::vector<v1::Session> out(resp.sessions().begin(), resp.sessions().end());
  std::stable_sort(out.begin(), out.end(), [](const v1::Session& a, const v1::Session& b) {
    return a.updated_unix_ms() > b.updated_unix_ms();
  });
  return out;
}

absl::StatusOr<std::string> NewestSessionHere(v1::AgentDaemon::Stub& stub,
                                              const std::string& project_root) {
  auto sessions = SessionsOf(stub, project_root);
  if (!sessions.ok()) return sessions.status();
  for (const v1::Session& s : *sessions) {
    if (s.load_error().empty() && !IsChildSession(s)) return s.id();  // the person's own
  }
  return absl::NotFoundError("no session in this project yet (" + project_root + ")");
}

absl::StatusOr<std::string> ResolveSession(v1::AgentDaemon::Stub& stub, const std::string& id,
                                           const std::string& project_root) {
  if (id.empty()) return NewestSessionHere(stub, project_root);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::GetSessionRequest req;
  req.set_id(id);
  v1::GetSessionResponse resp;
  grpc::Status s = stub.GetSession(&ctx, req, &resp);
  if (!s.ok()) return absl::NotFoundError(absl::StrCat(id, ": ", s.error_message()));
  return resp.session().id();
}

}  // namespace agent::client
