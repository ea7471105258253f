#include "client/commands/mcp_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "client/commands/session_calls.h"
#include "client/link/connection.h"
#include "client/link/project_root.h"
#include "client/terminal/yes_no.h"
#include "client/text/mcp_definition_text.h"
#include "common/atomic_file.h"
#include "common/command_lookup.h"
#include "common/json.h"
#include "common/mcp_server_name.h"
#include "common/paths.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using OrderedJson = nlohmann::ordered_json;

std::string ConfigPath() {
  std::string path = ConfigDir() + "/config.json";
  // A dotfile manager's symlink stays a symlink: write the file it points to.
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  return ec ? path : real.string();
}

// The project of the current directory, as sessions started here use it.
std::string Project() { return ProjectHere().root; }

int Error(const std::string& message) {
  std::fprintf(stderr, "agent mcp: %s\n", message.c_str());
  return kExitError;
}

// Reads config.json keeping its key order; a missing file is an empty object.
absl::StatusOr<OrderedJson> ReadConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return OrderedJson::object();
    return text.status();
  }
  OrderedJson j = OrderedJson::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(path + " is not a JSON object; fix it first");
  }
  return j;
}

absl::Status WriteConfig(const std::string& path, const OrderedJson& j) {
  if (auto s = MakeDirs(std::filesystem::path(path).parent_path().string()); !s.ok()) return s;
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "agent mcp: %s\n", message.c_str());
  return kExitUsage;
}

// Why the daemon would not find `command` (empty when it would): looked up as the daemon
// does (common/command_lookup.h), on the PATH a daemon this client starts gets (this
// process's). A relative path with a slash runs from each project's directory: not checked.
std::string MissingCommand(const std::string& command) {
  const char* env_path = std::getenv("PATH");
  const std::string path =
      env_path != nullptr && env_path[0] != '\0' ? env_path : "/usr/local/bin:/usr/bin:/bin";
  absl::StatusOr<std::string> found = FindCommandOnPath(command, path);
  if (!found.ok()) return std::string(found.status().message());
  if (command.front() != '/') return "";
  struct stat st;
  if (::stat(command.c_str(), &st) != 0) return "command not found: " + Visible(command);
  if (!S_ISREG(st.st_mode) || ::access(command.c_str(), X_OK) != 0) {
    return Visible(command) + " is not an executable file";
  }
  return "";
}

// What the daemon would reject is refused before it is written.
int Add(const std::string& name, const std::string& url, const std::vector<std::string>& command,
        const std::vector<std::string>& env, bool eager) {
  if (!ValidMcpServerName(name)) {
    return Usage(absl::StrCat("a server name is ", std::string(kMcpServerNameRule), ", not \"",
                              Visible(name), "\""));
  }
  if (url.empty() == command.empty()) {
    return Usage("give either `-- CMD ARGS…` (stdio) or `--url URL` (Streamable HTTP)");
  }
  if (!url.empty() && !ValidMcpServerUrl(url)) {
    return Usage(
        absl::StrCat("--url must be an http:// or https:// URL, not \"", Visible(url), "\""));
  }
  if (!command.empty() && command[0].empty()) return Usage("the command is empty");
  if (!command.empty()) {
    if (std::string missing = MissingCommand(command[0]); !missing.empty()) return Usage(missing);
  }
  const std::string path = ConfigPath();
  absl::StatusOr<OrderedJson> config = ReadConfig(path);
  if (!config.ok()) return Error(std::string(config.status().message()));
  OrderedJson def = OrderedJson::object();
  if (!url.empty()) {
    def["url"] = url;
  } else {
    def["command"] = command[0];
    def["args"] = std::vector<std::string>(command.begin() + 1, command.end());
  }
  for (const std::string& e : env) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) return Usage("--env takes NAME=VALUE, got " + e);
    def["env"][e.substr(0, eq)] = e.substr(eq + 1);
  }
  if (eager) def["start"] = "eager";
  OrderedJson& servers = (*config)["mcp_servers"];
  if (!servers.is_object()) servers = OrderedJson::object();
  const bool replaced = servers.contains(name);
  servers[name] = def;
  if (auto s = WriteConfig(path, *config); !s.ok()) return Error(std::string(s.message()));
  std::printf("%s MCP server %s in %s\n", replaced ? "replaced" : "added", name.c_str(),
              path.c_str());
  return 0;
}

int Remove(const std::string& name) {
  const std::string path = ConfigPath();
  absl::StatusOr<OrderedJson> config = ReadConfig(path);
  if (!config.ok()) return Error(std::string(config.status().message()));
  OrderedJson& servers = (*config)["mcp_servers"];
  if (!servers.is_object() || !servers.contains(name)) {
    return Error(absl::StrCat("no MCP server ", name, " in ", path,
                              " (a project's servers live in its .agent/settings.json)"));
  }
  servers.erase(name);
  if (auto s = WriteConfig(path, *config); !s.ok()) return Error(std::string(s.message()));
  std::printf("removed MCP server %s from %s\n", name.c_str(), path.c_str());
  return 0;
}

absl::StatusOr<v1::ListMcpServersResponse> ListServers(v1::AgentDaemon::Stub& stub,
                                                       const std::string& workdir,
                                                       bool check = false) {
  grpc::ClientContext ctx;
  v1::ListMcpServersRequest req;
  req.set_workdir(workdir);
  req.set_check(check);
  v1::ListMcpServersResponse resp;
  grpc::Status s = stub.ListMcpServers(&ctx, req, &resp);
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return resp;
}

// Shows everything the approval covers, then asks.
bool PersonApproves(const v1::McpServer& s, const std::string& project) {
  std::printf("This project's .agent/settings.json wants to run the MCP server %s:\n",
              Visible(s.name()).c_str());
  for (const std::string& line : DefinitionLines(s.definition(), true)) {
    std::printf("  %s\n", line.c_str());
  }
  if (s.transport() == "stdio") {
    std::printf("  (its environment: PATH, HOME and LANG, then the env above)\n");
    // A script of the repository (`./srv.py`, `python3 srv.py`) can change after this.
    std::printf(
        "  (this covers the command line, not the content of files of the project it "
        "runs)\n");
  }
  return AskYes(absl::StrCat("Run it for ", Visible(project), " (now and whenever it is used)?"));
}

int Approve(v1::AgentDaemon::Stub& stub, const std::string& name) {
  const std::string project = Project();
  absl::StatusOr<v1::ListMcpServersResponse> list = ListServers(stub, project);
  if (!list.ok()) return Error(std::string(list.status().message()));
  for (const v1::McpServer& s : list->servers()) {
    if (s.name() != name || s.scope() != "project") continue;
    if (!isatty(0)) return Error("approving a server needs a person at a terminal");
    if (!PersonApproves(s, project)) return Error("not approved");
    grpc::ClientContext ctx;
    v1::ApproveMcpServerRequest req;
    req.set_workdir(project);
    req.set_name(name);
    req.set_target(s.target());
    req.set_definition(s.definition());  // exactly what was shown
    v1::ApproveMcpServerResponse resp;
    grpc::Status st = stub.ApproveMcpServer(&ctx, req, &resp);
    if (!st.ok()) return Error(st.error_message());
    std::printf("approved %s for %s\n", name.c_str(), Visible(project).c_str());
    return 0;
  }
  return Error(
      absl::StrCat("this project's .agent/settings.json defines no MCP server ", Visible(name)));
}

}  // namespace

std::string McpServersText(v1::AgentDaemon::Stub& stub, const std::string& workdir) {
  absl::StatusOr<v1::ListMcpServersResponse> list = ListServers(stub, workdir);
  if (!list.ok()) return absl::StrCat("MCP servers: ", list.status().message(), "\n");
  return McpServersText(*list);
}

std::string McpServersText(const v1::ListMcpServersResponse& list) {
  if (list.servers().empty()) {
    return "no MCP servers (add one with: agent mcp add NAME -- CMD ARGS…)\n";
  }
  std::string out;
  for (const v1::McpServer& s : list.servers()) {
    absl::StrAppend(&out, Visible(s.name()), "  ", s.scope(), "  ", s.transport(), "  ", s.state(),
                    "  ", s.tools_size(), " tools  ", Visible(s.target()), "\n");
    // The rest of the definition (the first line is the target above).
    std::vector<std::string> lines = DefinitionLines(s.definition(), false);
    for (size_t i = 1; i < lines.size(); ++i) absl::StrAppend(&out, "    ", lines[i], "\n");
    if (!s.last_error().empty()) {
      absl::StrAppend(&out, "    error: ", Visible(s.last_error()), "\n");
    }
    for (const v1::McpTool& t : s.tools()) {
      absl::StrAppend(&out, "    ", Visible(t.name()), t.read_only() ? " (read-only)" : "",
                      t.filtered_out() ? " (not offered: the server's tool filters)" : "", "\n");
    }
  }
  return out;
}

int McpCommand(int argc, char** argv) {
  CLI::App app{"agent mcp: MCP tool servers"};
  app.name("agent mcp");
  app.require_subcommand(1);
  std::string name, url;
  std::vector<std::string> command, env;
  bool eager = false;
  CLI::App* add = app.add_subcommand("add", "add a server to your config.json");
  add->add_option("name", name, "its name (letters, digits, _ and -)")->required();
  add->add_option("--url", url, "a Streamable HTTP server's URL");
  add->add_option("-e,--env", env, "NAME=VALUE for the server's environment");
  add->add_flag("--eager", eager, "start it with the daemon instead of on first use");
  add->add_option("command", command, "after --: the command and its arguments");
  add->prefix_command(false);
  bool check = false;
  CLI::App* ls = app.add_subcommand("ls", "servers of this project: state, tools, last error");
  ls->add_flag("--check", check,
               "start the servers that may run and wait for each (exit 1 if one fails)");
  CLI::App* rm = app.add_subcommand("rm", "remove a server from your config.json");
  rm->add_option("name", name)->required();
  CLI::App* approve =
      app.add_subcommand("approve", "approve a server this project's settings define");
  approve->add_option("name", name)->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (add->parsed()) return Add(name, url, command, env, eager);
  if (rm->parsed()) return Remove(name);
  auto daemon = Connect(ConnectOptions{SocketPath(), true});
  if (!daemon.ok()) return Error(std::string(daemon.status().message()));
  if (ls->parsed()) {
    absl::StatusOr<v1::ListMcpServersResponse> list = ListServers(*daemon->stub, Project(), check);
    if (!list.ok()) return Error(absl::StrCat("MCP servers: ", list.status().message()));
    std::fputs(McpServersText(*list).c_str(), stdout);
    if (!check) return 0;
    // A server that failed to start or answer is what --check is for; one that waits for
    // approval was never started, which `ls` already says.
    for (const v1::McpServer& s : list->servers()) {
      if (s.state() == "failed") return kExitError;
    }
    return 0;
  }
  (void)approve;
  return Approve(*daemon->stub, name);
}

}  // namespace agent::client
