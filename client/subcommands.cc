#include "client/subcommands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/commands/checkpoint_commands.h"
#include "client/commands/cli.h"
#include "client/commands/context_commands.h"
#include "client/commands/daemon_command.h"
#include "client/commands/session_picker.h"
#include "client/commands/steer_command.h"
#include "client/commands/trust_command.h"
#include "client/commands/wait_command.h"
#include "client/link/one_shot_runs.h"
#include "client/text/checkpoint_text.h"
#include "client/text/child_view.h"
#include "client/text/session_table.h"
#include "client/view/session_client.h"
#include "common/paths.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

struct Args {
  std::string cmd;
  bool all = false, json = false, long_form = false, read_only = false, yes = false;
  bool plain = false, force = false;
  std::string id, what = "status", older_than;
  std::vector<std::string> ids;
};

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

int List(v1::AgentDaemon::Stub& stub, const Args& a, const ClientOptions& o) {
  std::vector<v1::Session> sessions;
  if (a.all) {
    grpc::ClientContext ctx;
    v1::ListSessionsRequest req;
    req.set_all(true);
    v1::ListSessionsResponse resp;
    grpc::Status s = stub.ListSessions(&ctx, req, &resp);
    if (!s.ok()) return Complain(s.error_message());
    sessions.assign(resp.sessions().begin(), resp.sessions().end());
    std::stable_sort(sessions.begin(), sessions.end(), [](const auto& x, const auto& y) {
      return x.updated_unix_ms() > y.updated_unix_ms();
    });
  } else {
    auto listed = SessionsOf(stub, o.project.root);
    if (!listed.ok()) return Complain(std::string(listed.status().message()));
    sessions = *std::move(listed);
  }
  // One-shot runs pile up: past a day they are left out here (--all lists everything).
  const int hidden =
      a.all ? 0 : DropOldOneShots(sessions, OneShotSessions(OneShotRunsPath()), NowMs());
  if (a.json) {
    std::fputs(SessionsJson(sessions).c_str(), stdout);
    return kExitDone;
  }
  std::fputs(SessionTable(sessions, NowMs(), {a.all, a.long_form}).c_str(), stdout);
  if (hidden > 0) {
    std::printf("(%d one-shot run%s older than a day not shown: agent ls --all)\n", hidden,
                hidden == 1 ? "" : "s");
  }
  return kExitDone;
}

int Fork(v1::AgentDaemon::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  v1::ForkSessionRequest req;
  req.set_session_id(id);
  v1::Session resp;
  grpc::Status s = stub.ForkSession(&ctx, req, &resp);
  if (!s.ok()) return Complain(s.error_message());
  std::printf("%s\n", resp.id().c_str());
  return kExitDone;
}

// Deletes one session (`id` may be a prefix) and says which.
bool RemoveOne(v1::AgentDaemon::Stub& stub, const std::string& id, const std::string& client_name) {
  v1::Session found;
  {
    grpc::ClientContext ctx;
    v1::GetSessionRequest req;
    req.set_id(id);
    v1::GetSessionResponse resp;
    grpc::Status s = stub.GetSession(&ctx, req, &resp);
    if (!s.ok()) {
      Complain(absl::StrCat(id, ": ", s.error_message()));
      return false;
    }
    found = resp.session();
  }
  grpc::ClientContext ctx;
  v1::DeleteSessionRequest req;
  req.set_session_id(found.id());
  req.set_client_name(client_name);  // attached clients are told who removed it
  v1::DeleteSessionResponse resp;
  grpc::Status s = stub.DeleteSession(&ctx, req, &resp);
  if (!s.ok()) {
    Complain(absl::StrCat(id, ": ", s.error_message()));
    return false;
  }
  std::string title = FitColumns(PrintableLine(found.title()), 60);
  std::printf("removed %s  %s\n", found.id().c_str(), title.c_str());
  return true;
}

int Remove(v1::AgentDaemon::Stub& stub, const Args& a, const ClientOptions& o) {
  std::vector<std::string> ids = a.ids;
  if (!a.older_than.empty()) {
    std::optional<int64_t> age = ParseAge(a.older_than);
    if (!age.has_value()) {
      return Complain(
          "--older-than takes a number and a unit s, m, h or d (e.g. 30d), not " + a.older_than,
          kExitUsage);
    }
    auto sessions = SessionsOf(stub, o.project.root);
    if (!sessions.ok()) return Complain(std::string(sessions.status().message()));
    int64_t cutoff = NowMs() - *age;
    for (const v1::Session& s : *sessions) {
      if (!s.load_error().empty() || s.updated_unix_ms() >= cutoff) continue;
      if (s.state() != v1::SESSION_STATE_IDLE && s.state() != v1::SESSION_STATE_UNSPECIFIED) {
        std::printf("kept %s  (%s)\n", s.id().c_str(), StateName(s.state()));
        continue;
      }
      ids.push_back(s.id());
    }
    if (ids.empty()) std::printf("no session here is older than %s\n", a.older_than.c_str());
  }
  bool ok = true;
  for (const std::string& id : ids) ok = RemoveOne(stub, id, o.client_name) && ok;
  return ok ? kExitDone : kExitError;
}

// The session `agent attach`/`agent resume` opens when none is named: the only or newest
// one here, or the one picked from a list when there are several and a terminal to ask on.
absl::StatusOr<std::string> ChooseSession(v1::AgentDaemon::Stub& stub, const Args& a,
                                          const ClientOptions& o) {
  if (a.cmd == "resume" && isatty(0) && isatty(1)) {
    auto sessions = SessionsOf(stub, o.project.root);
    if (!sessions.ok()) return sessions.status();
    std::vector<v1::Session> usable;
    for (const v1::Session& s : *sessions) {
      if (s.load_error().empty() && !IsChildSession(s)) usable.push_back(s);
    }
    if (usable.size() > 1) {
      std::optional<std::string> id = RunPicker(std::move(usable), o.color);
      if (!id.has_value()) return absl::CancelledError("");
      return *id;
    }
  }
  return NewestSessionHere(stub, o.project.root);
}

void AddFlags(CLI::App& app, Args& a) {
  const std::string& cmd = a.cmd;
  if (cmd == "ls") {
    app.add_flag("-a,--all", a.all, "sessions of every project");
    app.add_flag("--json", a.json, "one JSON array, for scripts");
    app.add_flag("-l,--long", a.long_form, "also tokens and cost");
  } else if (cmd == "attach") {
    app.add_option("id", a.id, "session id or unique prefix (default: newest here)");
    app.add_flag("-r,--read-only", a.read_only, "watch only: no prompts, approvals or cancels");
    app.add_flag("--plain", a.plain, "no colour");
  } else if (cmd == "resume") {
    app.add_option("id", a.id, "session id or unique prefix (default: choose from a list)");
    app.add_flag("--plain", a.plain, "no colour");
    app.add_flag("-y,--yes", a.yes, "approve gated tools");
  } else if (cmd == "fork" || cmd == "status") {
    app.add_option("id", a.id, "session id or unique prefix")->required();
  } else if (cmd == "rm") {
    app.add_option("ids", a.ids, "session ids or unique prefixes");
    app.add_option("--older-than", a.older_than,
                   "also every idle session here not used for this long (30d, 12h, 90m, 45s)");
  } else if (cmd == "daemon") {
    app.add_option("what", a.what, "status | stop")->check(CLI::IsMember({"status", "stop"}));
    app.add_flag("-f,--force", a.force, "stop: cancel running turns without asking");
  }
}

}  // namespace

namespace {

struct Help {
  const char* name;
  const char* usage;
  const char* what;
};

// Every subcommand, in the order `agent --help` lists them. `mcp` is main.cc's (mcp_command.h).
const std::vector<Help>& Subcommands() {
  static const std::vector<Help>* h = new std::vector<Help>{
      {"ls", "ls [--all] [--json] [--long]", "the sessions here (--all: of every project)"},
      {"attach", "attach [ID] [-r]", "attach to a session (-r: watch only)"},
      {"resume", "resume [ID]", "continue a session here (several: choose from a list)"},
      {"fork", "fork ID", "copy a session"},
      {"rm", "rm ID... [--older-than 30d]", "delete sessions"},
      {"status", "status ID", "a session's instruction files, tokens and cost"},
      {"undo", "undo [ID] [--turns N] [--yes]", "put the files back as before the last turns"},
      {"diff", "diff [ID] [--turn N]", "what the session's turns changed in the files"},
      {"trust", "trust [--yes] [--revoke]", "trust this project's shared allow rules and hooks"},
      {"wait", "wait [ID] [--for approval|idle]", "block until a session needs you or is idle"},
      {"steer", "steer [ID] TEXT", "tell the running turn TEXT: the model reads it next step"},
      {"mcp", "mcp add|ls|rm|approve ...", "MCP tool servers (agent mcp --help)"},
      {"daemon", "daemon status|stop [--force]", "the daemon: its state, or stop it"},
      {"sandbox", "sandbox [--network] -- CMD",
       "run CMD as the bash tool would (--check: what confines)"},
      {"acp", "acp", "speak the Agent Client Protocol on stdio (editors)"},
  };
  return *h;
}

}  // namespace

bool IsSubcommand(const std::string& word) {
  // main.cc runs these itself (McpCommand, SandboxCommand, RunAcp); they are listed for --help.
  if (word == "mcp" || word == "sandbox" || word == "acp") return false;
  for (const Help& h : Subcommands()) {
    if (word == h.name) return true;
  }
  return false;
}

std::string SubcommandsHelp() {
  // One column for the descriptions, as CLI11 aligns the options above (usages are ASCII).
  size_t width = 0;
  for (const Help& h : Subcommands()) width = std::max(width, std::string(h.usage).size());
  std::string out = "Subcommands:\n";
  for (const Help& h : Subcommands()) {
    std::string usage = h.usage;
    usage.resize(width, ' ');
    absl::StrAppend(&out, "  agent ", usage, "  ", h.what, "\n");
  }
  return out;
}

int RunSubcommand(int argc, char** argv) {
  if (std::string(argv[1]) == "undo" || std::string(argv[1]) == "diff") {
    return RunCheckpointSubcommand(argc, argv);
  }
  if (std::string(argv[1]) == "trust") return RunTrustSubcommand(argc, argv);
  if (std::string(argv[1]) == "wait") return RunWaitSubcommand(argc, argv);
  if (std::string(argv[1]) == "steer") return RunSteerSubcommand(argc, argv);
  Args a;
  a.cmd = argv[1];
  CLI::App app{"agent " + a.cmd};
  app.name("agent " + a.cmd);
  AddFlags(app, a);
  if (std::optional<int> code = ParseSubcommand(app, argc, argv)) return *code;
  if (a.cmd == "rm" && a.ids.empty() && a.older_than.empty()) {
    return Complain("rm needs session ids or --older-than AGE", kExitUsage);
  }
  if (!a.older_than.empty() && !ParseAge(a.older_than).has_value()) {
    return Complain(
        "--older-than takes a number and a unit s, m, h or d (e.g. 30d), not " + a.older_than,
        kExitUsage);
  }
  if (a.cmd == "daemon") return DaemonCommand(a.what, a.force);
  auto options = BaseOptions(false, a.yes, a.plain);
  if (!options.ok()) return Complain(std::string(options.status().message()), kExitUsage);
  ClientOptions& o = *options;
  Connection daemon = ConnectForProject(o);
  v1::AgentDaemon::Stub& stub = *daemon.stub;
  if (a.cmd == "ls") ExitWithoutTeardown(List(stub, a, o));
  if (a.cmd == "fork") ExitWithoutTeardown(Fork(stub, a.id));
  if (a.cmd == "rm") ExitWithoutTeardown(Remove(stub, a, o));
  if (a.cmd == "status") ExitWithoutTeardown(StatusCommand(stub, a.id));
  o.read_only = a.read_only;
  if (a.id.empty()) {
    auto chosen = ChooseSession(stub, a, o);
    if (absl::IsCancelled(chosen.status())) ExitWithoutTeardown(kExitCancelled);
    if (!chosen.ok()) ExitWithoutTeardown(Complain(std::string(chosen.status().message())));
    a.id = *chosen;
  }
  o.session_id = a.id;
  ExitWithoutTeardown(RunInteractive(daemon, o));
}

}  // namespace agent::client
