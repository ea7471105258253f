#include "client/acp/acp_agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>

#include "absl/strings/str_cat.h"
#include "client/acp/mcp_servers.h"
#include "client/acp/modes.h"
#include "client/link/project_root.h"
#include "common/grpc_status.h"
#include "common/version.h"

namespace agent::client::acp {
namespace {

namespace v1 = agent::v1;

// ACP's protocol version this agent speaks.
constexpr int kAcpProtocolVersion = 1;

int CodeOf(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      return kInvalidParams;
    case absl::StatusCode::kNotFound:
      return kResourceNotFound;
    default:
      return kInternalError;
  }
}

// The editor's cwd: a string naming an existing directory by an absolute path.
absl::StatusOr<std::string> CwdOf(const Json& params) {
  std::string cwd = GetString(params, "cwd");
  if (cwd.empty() || cwd.front() != '/') {
    return absl::InvalidArgumentError("cwd must be an absolute path");
  }
  struct stat st {};
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError("cwd is not a directory: " + cwd);
  }
  return cwd;
}

// Hands the editor's servers (EditorMcpServers) to session `id`; nothing to do for none.
absl::Status GiveMcpServers(v1::AgentDaemon::Stub& stub, const std::string& id,
                            const Json& servers) {
  if (servers.empty()) return absl::OkStatus();
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::SetSessionMcpServersRequest req;
  req.set_session_id(id);
  req.set_servers_json(DumpJson(servers));
  v1::SetSessionMcpServersResponse resp;
  grpc::Status st = stub.SetSessionMcpServers(&ctx, req, &resp);
  return st.ok() ? absl::OkStatus() : FromGrpcStatus(st);
}

// A session by id among all the daemon's, NotFound when none.
absl::StatusOr<v1::Session> FindSession(v1::AgentDaemon::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::ListSessionsRequest req;
  req.set_all(true);
  v1::ListSessionsResponse resp;
  grpc::Status st = stub.ListSessions(&ctx, req, &resp);
  if (!st.ok()) return FromGrpcStatus(st);
  for (const v1::Session& s : resp.sessions()) {
    if (s.id() == id) return s;
  }
  return absl::NotFoundError("no session " + id);
}

// The client name others see: the editor's name when it gave one.
std::string ClientName(const Json& params) {
  std::string name;
  if (params.contains("clientInfo") && params["clientInfo"].is_object()) {
    for (char c : GetString(params["clientInfo"], "name")) {
      if (name.size() < 32 && (std::isalnum(static_cast<unsigned char>(c)) || c == '-')) {
        name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
  }
  return absl::StrCat("acp-", name.empty() ? "" : name + "-", getpid());
}

}  // namespace

AcpAgent::AcpAgent(const Connection& daemon, ClientOptions options,
                   std::function<void(const std::string&)> send)
    : daemon_(daemon), o_(std::move(options)), send_(std::move(send)) {}

AcpAgent::~AcpAgent() = default;

std::vector<AcpSession*> AcpAgent::Sessions() {
  std::vector<AcpSession*> out;
  for (auto& [id, s] : sessions_) out.push_back(s.get());
  return out;
}

void AcpAgent::OnLine(const LineReader::Line& line) {
  if (line.too_long) {
    send_(ErrorLine(nullptr, kInvalidRequest,
                    absl::StrCat("Invalid Request: message over ", kMaxMessageBytes, " bytes")));
    return;
  }
  Message m = ParseMessage(line.text);
  switch (m.kind) {
    case Message::kInvalid:
      send_(ErrorLine(m.id, m.code, m.problem));
      return;
    case Message::kRequest:
      return OnRequest(m);
    case Message::kNotification:
      return OnNotification(m);
    case Message::kResponse: {
      if (!m.id.is_number_integer()) return;
      auto it = requests_.find(m.id.get<int64_t>());
      if (it == requests_.end()) return;
      auto s = sessions_.find(it->second);
      if (s != sessions_.end()) s->second->OnEditorAnswer(it->first, m);
      requests_.erase(it);
      return;
    }
  }
}

void AcpAgent::OnRequest(const Message& m) {
  Reply r = absl::UnimplementedError("");
  if (m.method == "initialize") {
    r = Initialize(m.params);
  } else if (m.method == "session/new") {
    r = NewSession(m.params);
    if (r.ok() && r->has_value()) {  // the editor learns the id before the commands
      send_(ResultLine(m.id, **r));
      AnnounceCommands(GetString(**r, "sessionId"), o_.project.root);
      return;
    }
  } else if (m.method == "session/load") {
    r = LoadSession(m.id, m.params);
  } else if (m.method == "session/prompt") {
    r = Prompt(m.id, m.params);
  } else if (m.method == "session/set_mode") {
    r = SetMode(m.params);
  } else {
    send_(ErrorLine(m.id, kMethodNotFound, "Method not found: " + m.method));
    return;
  }
  if (!r.ok()) {
    // A session that is not there is "Resource not found" naming it, as the SDK expects.
    Json data = r.status().code() == absl::StatusCode::kNotFound && m.params.contains("sessionId")
                    ? Json{{"sessionId", m.params["sessionId"]}}
                    : Json();
    send_(ErrorLine(m.id, CodeOf(r.status()), std::string(r.status().message()), data));
  } else if (r->has_value()) {
    send_(ResultLine(m.id, **r));
  }
}

void AcpAgent::OnNotification(const Message& m) {
  if (m.method != "session/cancel") return;  // unknown notifications are ignored (JSON-RPC)
  absl::StatusOr<AcpSession*> s = Find(m.params);
  if (s.ok()) (*s)->Cancel();
}

AcpAgent::Reply AcpAgent::Initialize(const Json& params) {
  o_.client_name = ClientName(params);
  reads_files_ = false;
  auto caps_in = params.find("clientCapabilities");
  if (caps_in != params.end() && caps_in->is_object()) {
    auto fs = caps_in->find("fs");
    if (fs != caps_in->end() && fs->is_object()) {
      auto read = fs->find("readTextFile");
      reads_files_ = read != fs->end() && read->is_boolean() && read->get<bool>();
    }
  }
  Json caps = {
      {"loadSession", true},
      {"promptCapabilities", Json{{"image", true}, {"audio", false}, {"embeddedContext", true}}},
      {"mcpCapabilities", Json{{"http", true}, {"sse", false}}}};
  return Json{{"protocolVersion", kAcpProtocolVersion},
              {"agentCapabilities", caps},
              {"authMethods", Json::array()},
              {"agentInfo", Json{{"name", "agentd"}, {"title", "agent"}, {"version", kVersion}}}};
}

AcpAgent::Reply AcpAgent::NewSession(const Json& params) {
  absl::StatusOr<std::string> cwd = CwdOf(params);
  if (!cwd.ok()) return cwd.status();
  absl::StatusOr<Json> servers = EditorMcpServers(params);
  if (!servers.ok()) return servers.status();
  o_.project = FindProject(*cwd);
  absl::StatusOr<v1::Session> s = CreateSessionHere(*daemon_.stub, o_, v1::POLICY_MODE_ASK);
  if (!s.ok()) return s.status();
  if (absl::Status mcp = GiveMcpServers(*daemon_.stub, s->id(), *servers); !mcp.ok()) return mcp;
  Open(s->id(), *cwd).Attach(std::nullopt, Json());
  return Json{{"sessionId", s->id()}, {"modes", ModeState(v1::POLICY_MODE_ASK)}};
}

AcpAgent::Reply AcpAgent::LoadSession(const Json& id, const Json& params) {
  absl::StatusOr<std::string> cwd = CwdOf(params);
  if (!cwd.ok()) return cwd.status();
  absl::StatusOr<Json> servers = EditorMcpServers(params);
  if (!servers.ok()) return servers.status();
  std::string session_id = GetString(params, "sessionId");
  if (session_id.empty()) return absl::InvalidArgumentError("sessionId must be a string");
  absl::StatusOr<v1::Session> s = FindSession(*daemon_.stub, session_id);
  if (!s.ok()) return s.status();
  ProjectDirs project = FindProject(*cwd);
  if (s->workdir() != project.root) {
    return absl::NotFoundError(absl::StrCat("session ", session_id, " belongs to ", s->workdir(),
                                            ", not to ", project.root));
  }
  if (!s->load_error().empty()) {
    return absl::InternalError("the session cannot be loaded: " + s->load_error());
  }
  if (absl::Status mcp = GiveMcpServers(*daemon_.stub, session_id, *servers); !mcp.ok()) {
    return mcp;
  }
  o_.project = project;
  sessions_.erase(session_id);  // loaded again: a fresh replay
  AnnounceCommands(session_id, project.root);
  Open(session_id, s->cwd().empty() ? s->workdir() : s->cwd())
      .Attach(id, Json{{"modes", ModeState(s->policy())}});
  return std::nullopt;  // answered after the history is replayed
}

AcpAgent::Reply AcpAgent::Prompt(const Json& id, const Json& params) {
  absl::StatusOr<AcpSession*> s = Find(params);
  if (!s.ok()) return s.status();
  absl::StatusOr<PromptText> text =
      PromptFromContent(params.contains("prompt") ? params["prompt"] : Json());
  if (!text.ok()) return text.status();
  if (absl::Status sent = (*s)->Prompt(id, *text); !sent.ok()) return sent;
  return std::nullopt;  // answered when its turn ends
}

AcpAgent::Reply AcpAgent::SetMode(const Json& params) {
  absl::StatusOr<AcpSession*> s = Find(params);
  if (!s.ok()) return s.status();
  std::optional<v1::PolicyMode> mode = PolicyOfMode(GetString(params, "modeId"));
  if (!mode.has_value()) {
    return absl::InvalidArgumentError("unknown modeId \"" + GetString(params, "modeId") + "\"");
  }
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::SetPolicyRequest req;
  req.set_session_id((*s)->id());
  req.set_mode(*mode);
  v1::SetPolicyResponse resp;
  grpc::Status st = daemon_.stub->SetPolicy(&ctx, req, &resp);
  if (!st.ok()) return FromGrpcStatus(st);
  return Json::object();
}

absl::StatusOr<AcpSession*> AcpAgent::Find(const Json& params) {
  std::string id = GetString(params, "sessionId");
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    return absl::NotFoundError("unknown sessionId \"" + id +
                               "\": open it with session/new or session/load first");
  }
  return it->second.get();
}

AcpSession& AcpAgent::Open(const std::string& id, const std::string& cwd) {
  EditorLink link{send_,
                  [this, id](const std::string& method, Json params) {
                    return Request(id, method, std::move(params));
                  },
                  reads_files_};
  auto s = std::make_unique<AcpSession>(daemon_, o_, id, cwd, std::move(link));
  AcpSession& ref = *s;
  sessions_[id] = std::move(s);
  return ref;
}

int64_t AcpAgent::Request(const std::string& session_id, const std::string& method, Json params) {
  int64_t id = next_request_++;
  requests_[id] = session_id;
  send_(RequestLine(id, method, std::move(params)));
  return id;
}

void AcpAgent::AnnounceCommands(const std::string& session_id, const std::string& workdir) {
  grpc::ClientContext ctx;
  SetCallDeadline(ctx);
  v1::ListCommandsRequest req;
  req.set_workdir(workdir);
  v1::ListCommandsResponse resp;
  if (!daemon_.stub->ListCommands(&ctx, req, &resp).ok() || resp.commands_size() == 0) return;
  Json commands = Json::array();
  for (const v1::CustomCommand& c : resp.commands()) {
    commands.push_back(Json{{"name", c.name()},
                            {"description", c.description()},
                            {"input", Json{{"hint", "arguments"}}}});
  }
  send_(NotificationLine("session/update",
                         Json{{"sessionId", session_id},
                              {"update", Json{{"sessionUpdate", "available_commands_update"},
                                              {"availableCommands", commands}}}}));
}

}  // namespace agent::client::acp
