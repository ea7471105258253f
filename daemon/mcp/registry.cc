#include "daemon/mcp/registry.h"

#include <sys/stat.h>

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/tool_env.h"
#include "daemon/mcp/approvals.h"
#include "daemon/mcp/http_transport.h"
#include "daemon/mcp/mcp_tool.h"
#include "daemon/mcp/stdio_transport.h"
#include "daemon/mcp/tool_shape.h"

namespace agent::daemon::mcp {
namespace {

// Sessions whose reported problems are remembered; beyond it the memory starts over.
constexpr size_t kMaxReportedSessions = 1000;

std::string HomeCwd() {
  for (const std::string& e : MinimalToolEnvironment()) {
    if (e.rfind("HOME=", 0) == 0) return e.substr(5);
  }
  return "/";
}

// `text` with the controls (C0, DEL, C1) repository content or a server may have put in it
// written as \xNN: a session shows these problems as they are, on a person's terminal.
std::string Printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F) {
      out += absl::StrFormat("\\x%02x", c);
    } else if (c1) {
      out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(text[++i]));
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string NeedsApproval(const ServerDef& def) {
  return absl::StrCat(
      "MCP server ", def.name, " (defined by this project's .agent/settings.json: ", def.Target(),
      ") needs a person's approval before it runs: `agent mcp approve ", def.name, "`");
}

bool Under(std::string_view path, std::string_view dir) {
  return path == dir ||
         (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

// A confined server that names a directory under /tmp or /var/tmp (its cwd, an argument) finds
// it empty: the sandbox replaces both and binds only the regular files the command line names
// (bwrap_argv.h). Said with how it ended, instead of a bare exit status.
std::string HiddenByTheSandbox(const std::vector<std::string>& named, const std::string& cwd,
                               const std::string& project) {
  std::vector<std::string> paths = named;
  paths.push_back(cwd);
  for (const std::string& p : paths) {
    if (!(Under(p, "/tmp") || Under(p, "/var/tmp")) || Under(p, project)) continue;
    struct stat st;
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) continue;  // bound
    return absl::StrCat(p, " is under ", Under(p, "/tmp") ? "/tmp" : "/var/tmp",
                        ", which the sandbox replaces with an empty directory: only the files "
                        "the server's command line names are there (move its files elsewhere, "
                        "or into the project)");
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(const ServerDef& def) {
  return MakeConfinedTransport(def, nullptr);
}

absl::StatusOr<std::unique_ptr<Transport>> MakeConfinedTransport(const ServerDef& def,
                                                                 const sandbox::Sandbox* box) {
  if (def.is_http()) {
    HttpOptions o;
    o.url = def.url;
    o.headers = def.headers;
    o.log_name = def.name;
    return std::unique_ptr<Transport>(std::make_unique<HttpTransport>(std::move(o)));
  }
  StdioOptions o;
  o.command = def.command;
  o.args = def.args;
  // Never the daemon's environment (it may hold API keys): the minimal one and what the
  // definition sets.
  o.env = MinimalToolEnvironment();
  for (const auto& entry : def.env) {
    const std::string prefix = entry.first + "=";
    std::erase_if(o.env, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    o.env.push_back(prefix + entry.second);
  }
  const std::string base = def.scope == "user" || def.project.empty() ? HomeCwd() : def.project;
  o.cwd = def.cwd.empty() ? base : (def.cwd.front() == '/' ? def.cwd : base + "/" + def.cwd);
  o.log_name = def.name;
  if (box != nullptr && box->Confines() && def.scope == "project") {
    sandbox::SandboxTarget target{def.project, o.cwd, /*own_session=*/false};
    // The approved command line's own files (a server script beside a project under /tmp).
    target.readable = def.args;
    target.readable.push_back(def.command);
    o.wrapper = box->Options(target, def.network);
    o.exit_note = HiddenByTheSandbox(target.readable, o.cwd, def.project);
    o.env = sandbox::SandboxEnvironment(o.env);
  } else if (box != nullptr && box->Confines()) {
    // The user's own server runs as defined, but in a PID namespace, so that it ends whole.
    o.wrapper = box->ContainOptions(o.cwd);
  }
  return std::unique_ptr<Transport>(std::make_unique<StdioTransport>(std::move(o)));
}

Registry::Registry(Options options) : options_(std::move(options)) {}

Registry::~Registry() { Shutdown(); }

std::shared_ptr<ManagedServer> Registry::ServerFor(const ServerDef& def) {
  MutexLock l(&mu_);
  if (shut_down_) return nullptr;
  auto& slot = servers_[def.Identity()];
  if (!slot) slot = std::make_shared<ManagedServer>(def, options_.make_transport, options_.backoff);
  return slot;
}

bool Registry::FirstReport(const std::string& session_id, const std::string& problem) {
  MutexLock l(&mu_);
  if (reported_.size() > kMaxReportedSessions) reported_.clear();
  return reported_[session_id].insert(problem).second;
}

void Registry::StopReplaced(const std::string& project, const ParsedServers& defs) {
  std::set<std::string> user = {}, mine = {};
  for (const ServerDef& d : LoadUserServers().servers) user.insert(d.Identity());
  for (const ServerDef& d : defs.servers) (d.scope == "user" ? user : mine).insert(d.Identity());
  std::vector<std::shared_ptr<ManagedServer>> gone;
  {
    MutexLock l(&mu_);
    for (auto it = servers_.begin(); it != servers_.end();) {
      const ServerDef& d = it->second->def();
      // An editor's servers come and go with SetSessionServers and EndSession.
      const bool replaced = d.scope == "editor" ? false
                            : d.scope == "user"
                                ? user.count(it->first) == 0
                                : d.project == project && mine.count(it->first) == 0;
      if (replaced) {
        gone.push_back(std::move(it->second));
        it = servers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& server : gone) server->Stop();  // a call still running on it ends with an error
}

std::shared_ptr<const tools::ToolRegistry> Registry::ToolsFor(
    const std::string& project, const std::string& session_id, const std::atomic<bool>* cancelled,
    const std::function<void(const std::string&)>& report) {
  ParsedServers defs = ServersFor(project);
  StopReplaced(project, defs);
  {
    MutexLock l(&mu_);
    if (auto it = session_defs_.find(session_id); it != session_defs_.end()) {
      defs.servers.insert(defs.servers.end(), it->second.begin(), it->second.end());
    }
  }
  std::vector<std::string> problems;
  for (const std::string& p : defs.problems) problems.push_back("MCP configuration: " + p);
  // With the definition read now: its tool filters are not part of the server's identity.
  std::vector<std::pair<std::shared_ptr<ManagedServer>, const ServerDef*>> wanted;
  for (const ServerDef& def : defs.servers) {
    if (!IsApproved(def)) {
      problems.push_back(NeedsApproval(def));
      continue;
    }
    if (auto server = ServerFor(def)) {
      server->Want();
      wanted.emplace_back(std::move(server), &def);
    }
  }
  auto registry = std::make_shared<tools::ToolRegistry>(options_.base_tools());
  for (const auto& [server, def] : wanted) {
    server->AwaitSettled(absl::Now() + absl::Milliseconds(server->def().startup_timeout_ms),
                         cancelled);
    ManagedServer::Snapshot snap = server->snapshot();
    if (snap.state != "running") {
      problems.push_back(absl::StrCat("MCP server ", server->def().name,
                                      snap.state == "failed" ? " failed" : " is " + snap.state,
                                      snap.last_error.empty() ? "" : ": " + snap.last_error,
                                      "; its tools are unavailable until it runs again"));
    }
    for (ToolInfo& t : snap.tools) {
      if (!def->Offers(t.name)) continue;
      std::string name = ModelToolName(server->def().name, t.name);
      if (registry->Find(name) != nullptr) {
        problems.push_back(absl::StrCat("MCP server ", server->def().name, ": tool \"", t.name,
                                        "\" is left out, its name clashes with another's"));
        continue;
      }
      registry->Add(std::make_unique<McpTool>(server, std::move(t), std::move(name)));
    }
  }
  for (const std::string& p : problems) {
    if (report && FirstReport(session_id, p)) report(Printable(p));
  }
  return registry;
}

std::vector<agent::v1::McpServer> Registry::List(const std::string& project) {
  ParsedServers defs = ServersFor(project);
  std::vector<agent::v1::McpServer> out;
  for (const ServerDef& def : defs.servers) {
    agent::v1::McpServer s;
    s.set_name(def.name);
    s.set_scope(def.scope);
    s.set_transport(def.is_http() ? "http" : "stdio");
    s.set_target(def.Target());
    s.set_definition(def.Identity());
    if (!IsApproved(def)) {
      s.set_state("needs approval");
      out.push_back(std::move(s));
      continue;
    }
    std::shared_ptr<ManagedServer> server;
    {
      MutexLock l(&mu_);
      auto it = servers_.find(def.Identity());
      if (it != servers_.end()) server = it->second;
    }
    if (server == nullptr) {
      s.set_state("stopped");
      out.push_back(std::move(s));
      continue;
    }
    ManagedServer::Snapshot snap = server->snapshot();
    s.set_state(snap.state);
    s.set_last_error(snap.last_error);
    for (const ToolInfo& t : snap.tools) {
      agent::v1::McpTool* tool = s.add_tools();
      tool->set_name(ModelToolName(def.name, t.name));
      tool->set_description(t.description.substr(0, 300));
      tool->set_read_only(t.read_only);
      tool->set_filtered_out(!def.Offers(t.name));
    }
    out.push_back(std::move(s));
  }
  for (const std::string& p : defs.problems) {
    agent::v1::McpServer s;
    s.set_name("(invalid)");
    s.set_state("failed");
    s.set_last_error(p);
    out.push_back(std::move(s));
  }
  return out;
}

absl::Status Registry::Approve(const std::string& project, const std::string& name,
                               const std::string& target, const std::string& definition) {
  if (definition.empty()) {
    return absl::InvalidArgumentError(
        "an approval must name the whole definition the person was shown (update agent)");
  }
  for (const ServerDef& def : LoadProjectServers(project).servers) {
    if (def.name != name) continue;
    if (def.Target() != target || def.Identity() != definition) {
      return absl::FailedPreconditionError(
          absl::StrCat("the project's server ", name, " changed since it was shown (it now runs `",
                       def.Target(), "`): look at it again before approving"));
    }
    return RecordApproval(def);
  }
  return absl::NotFoundError(
      absl::StrCat("this project's .agent/settings.json defines no MCP server ", name));
}

absl::Status Registry::SetSessionServers(const std::string& project, const std::string& session_id,
                                         const Json& servers) {
  ParsedServers parsed =
      ParseServers(Json{{"mcp_servers", servers}}, "editor", project, "the editor's mcpServers");
  if (!parsed.problems.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(parsed.problems, "; "));
  }
  std::set<std::string> keep;
  for (ServerDef& def : parsed.servers) {
    def.session = session_id;
    keep.insert(def.Identity());
  }
  std::vector<std::shared_ptr<ManagedServer>> gone;
  {
    MutexLock l(&mu_);
    if (shut_down_) return absl::UnavailableError("the daemon is stopping");
    for (auto it = servers_.begin(); it != servers_.end();) {
      const ServerDef& d = it->second->def();
      if (d.scope == "editor" && d.session == session_id && keep.count(it->first) == 0) {
        gone.push_back(std::move(it->second));
        it = servers_.erase(it);
      } else {
        ++it;
      }
    }
    if (parsed.servers.empty()) {
      session_defs_.erase(session_id);
    } else {
      session_defs_[session_id] = std::move(parsed.servers);
    }
  }
  for (auto& server : gone) server->Stop();
  return absl::OkStatus();
}

void Registry::EndSession(const std::string& session_id) {
  std::vector<std::shared_ptr<ManagedServer>> gone;
  {
    MutexLock l(&mu_);
    if (session_defs_.erase(session_id) == 0) return;
    for (auto it = servers_.begin(); it != servers_.end();) {
      const ServerDef& d = it->second->def();
      if (d.scope == "editor" && d.session == session_id) {
        gone.push_back(std::move(it->second));
        it = servers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& server : gone) server->Stop();
}

void Registry::StartEager() {
  for (const ServerDef& def : LoadUserServers().servers) {
    if (!def.eager) continue;
    if (auto server = ServerFor(def)) server->Want();
  }
}

void Registry::Shutdown() {
  std::map<std::string, std::shared_ptr<ManagedServer>> servers;
  {
    MutexLock l(&mu_);
    shut_down_ = true;
    servers.swap(servers_);
  }
  for (auto& [id, server] : servers) server->Stop();
}

}  // namespace agent::daemon::mcp
