// agent: the thin client. `agent` opens an interactive session here, `agent "prompt"` runs one
// turn, `agent < task.md` sends a file as one prompt, and the subcommands manage sessions and
// the daemon. Everything goes through agentd's gRPC API; the first command starts the daemon
// when none is running.
#include <langinfo.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "client/acp/acp_loop.h"
#include "client/commands/cli.h"
#include "client/commands/context_commands.h"
#include "client/commands/mcp_command.h"
#include "client/commands/proxy.h"
#include "client/commands/sandbox_command.h"
#include "client/link/remote.h"
#include "client/subcommands.h"
#include "client/view/session_client.h"
#include "client/view/stdin_prompt.h"
#include "common/protocol.h"
#include "common/version.h"

namespace {

using agent::client::ClientOptions;
using agent::client::Complain;
using agent::client::kExitUsage;

// Line editing and our width tables need UTF-8; a C/POSIX locale (common under ssh, cron
// or a bare container) would make every non-ASCII key an error, so it is upgraded.
void SetUtf8Locale() {
  const char* set = std::setlocale(LC_CTYPE, "");
  if (set == nullptr || std::strcmp(nl_langinfo(CODESET), "ANSI_X3.4-1968") == 0) {
    std::setlocale(LC_CTYPE, "C.UTF-8");
  }
}

struct Flags {
  bool version = false, json = false, yes = false, plain = false, cont = false;
  bool deny_tools = false, print = false, usage = false, auto_mode = false, accept_edits = false;
  bool json_snapshot = false, plan = false;
  std::string resume_id, model;
  std::vector<std::string> words;
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("prompt", f.words, "the prompt for one turn (\"-\": read it from stdin)");
  app.add_flag("--version", f.version, "print the version and exit");
  app.add_flag("-p,--print", f.print, "one turn, then exit (what a prompt argument does anyway)");
  app.add_flag("--json", f.json, "print every event as one JSON object per line");
  app.add_flag("--json-snapshot", f.json_snapshot,
               "with --json: the first line is the whole snapshot, not session_started");
  app.add_flag("--usage", f.usage, "print the turn's tokens and cost on stderr at the end");
  app.add_flag("-y,--yes", f.yes, "approve gated tools (write_file, edit_file, bash)");
  app.add_flag("--read-only", f.deny_tools, "deny every gated tool: the agent may only read");
  app.add_flag("--plan", f.plan,
               "plan mode: the agent reads and plans, changes nothing, then asks how to go on");
  app.add_flag("--auto", f.auto_mode,
               "auto mode: commands in the sandbox and edits in the project run without asking");
  app.add_flag("--accept-edits", f.accept_edits,
               "edits in the project run without asking; commands still ask");
  app.add_flag("--plain", f.plain, "no colour or styling");
  app.add_option("--model", f.model, "the model for this client's turns (instead of AGENT_MODEL)");
  app.add_option("-r,--resume", f.resume_id, "continue session ID (or unique prefix)");
  app.add_flag("-c,--continue", f.cont, "continue the newest session here");
  app.footer(
      "With stdin not a terminal, `agent \"question\"` sends the question followed by stdin,\n"
      "and `agent` (or `agent -`) sends stdin as the prompt.\n"
      "\n" +
      agent::client::SubcommandsHelp() +
      "\nRemote: --host [user@]HOST (or AGENT_HOST) runs any command against HOST's daemon over\n"
      "ssh; --cd DIR (default AGENT_REMOTE_DIR, else the remote home), --remote-bin PATH.");
}

struct Prompt {
  std::string text;   // empty: the run is interactive
  std::string title;  // of a new session: the person's words (stdin_prompt.h)
};

// The one-shot prompt: the words, then stdin when it is not a terminal (or when "-" is
// given). Empty when the run is interactive. An error exits kExitUsage.
absl::StatusOr<Prompt> OneShotPrompt(const Flags& f) {
  std::vector<std::string> words = f.words;
  bool dash = !words.empty() && words.front() == "-";
  if (dash) words.erase(words.begin());
  std::string question = absl::StrJoin(words, " ");
  const bool piped = isatty(0) == 0;
  if (!dash && !piped) {
    if (question.empty() && f.print) {
      return absl::InvalidArgumentError("-p/--print needs a prompt (or stdin with one)");
    }
    return Prompt{question, agent::client::PromptTitle(question, "")};
  }
  auto input = agent::client::ReadInput(0, agent::client::kMaxStdinBytes, [] {
    Complain("reading stdin until it ends (Ctrl-D ends it; </dev/null gives none)", 0);
  });
  if (!input.ok()) return input.status();
  std::string prompt = agent::client::PromptWithInput(question, *input);
  if (prompt.find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError("stdin is empty and there is no prompt: nothing to send");
  }
  return Prompt{prompt, agent::client::PromptTitle(question, *input)};
}

// Commands that act on HOST's own files run there as they are (their arguments quoted).
int RunOnHost(agent::client::RemoteTarget t, const std::vector<std::string>& args) {
  if (args[0] == "daemon") t.dir.clear();  // the daemon is the host's, not a directory's
  // `mcp approve` and a `daemon stop` that would cancel turns ask a person.
  const bool tty = (args[0] == "mcp" || args[0] == "daemon") && isatty(0) && isatty(1);
  return agent::client::RunRemoteCommand(t, args, tty);
}

// argv without the remote flags (remote_target.h), owning its strings.
struct Args {
  std::vector<std::string> s;
  std::vector<char*> c;  // s's, then nullptr
};

// Takes --host, --cd and --remote-bin out of argv into `out` and sets the process's remote
// target; an exit code when the command is over already (a usage error, a command run on HOST).
std::optional<int> ApplyRemote(int argc, char** argv, Args& out) {
  auto remote = agent::client::ParseRemoteArgs(std::vector<std::string>(argv + 1, argv + argc),
                                               [](const char* n) { return std::getenv(n); });
  if (!remote.ok()) return Complain(std::string(remote.status().message()), kExitUsage);
  out.s = std::move(remote->argv);
  if (remote->target.has_value() && !out.s.empty()) {
    if (out.s[0] == "proxy") return Complain("agent proxy runs on the daemon's host", kExitUsage);
    // `sandbox` too: the command runs in HOST's project, as HOST's bash tool would run it.
    if (out.s[0] == "daemon" || out.s[0] == "mcp" || out.s[0] == "sandbox") {
      return RunOnHost(*remote->target, out.s);
    }
  }
  agent::client::SetRemoteTarget(std::move(remote->target));
  out.s.insert(out.s.begin(), argv[0]);
  for (std::string& a : out.s) out.c.push_back(a.data());
  out.c.push_back(nullptr);
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  SetUtf8Locale();
  // The remote end of `agent --host`: never remote itself (AGENT_HOST is not read).
  if (argc > 1 && agent::client::IsProxyCommand(argv[1])) {
    return agent::client::RunProxy(argc, argv);
  }
  Args args;
  if (std::optional<int> done = ApplyRemote(argc, argv, args)) return *done;
  argc = static_cast<int>(args.c.size()) - 1;
  argv = args.c.data();
  if (argc > 1 && agent::client::IsAcpCommand(argv[1])) return agent::client::RunAcp(argc, argv);
  if (argc > 1 && agent::client::IsSubcommand(argv[1])) {
    return agent::client::RunSubcommand(argc, argv);
  }
  if (argc > 1 && std::string(argv[1]) == "mcp") {
    return agent::client::McpCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::string(argv[1]) == "sandbox") {
    return agent::client::SandboxCommand(argc - 1, argv + 1);
  }
  CLI::App app{
      "agent: a coding agent. `agent` alone is interactive; `agent \"prompt\"` runs one turn."};
  Flags f;
  AddFlags(app, f);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return agent::client::ParseFailed(app, e);
  }
  if (f.version) {
    std::printf("agent %s (git %s, protocol %d)\n", agent::kVersion, agent::kGitRevision,
                agent::kProtocolVersion);
    return 0;
  }
  auto options = agent::client::BaseOptions(f.json, f.yes, f.plain);
  if (!options.ok()) return Complain(std::string(options.status().message()), kExitUsage);
  ClientOptions& o = *options;
  o.deny_tools = f.deny_tools;
  o.auto_mode = f.auto_mode;
  o.plan = f.plan;
  o.accept_edits = f.accept_edits;
  o.json_snapshot = f.json_snapshot;
  o.model = f.model;
  // Read before connecting: a usage error or an oversized stdin starts no daemon.
  auto prompt = OneShotPrompt(f);
  if (!prompt.ok()) return Complain(std::string(prompt.status().message()), kExitUsage);
  agent::client::Connection daemon = agent::client::ConnectForProject(o);
  if (f.cont && f.resume_id.empty()) {
    auto newest = agent::client::NewestSessionHere(*daemon.stub, o.project.root);
    if (!newest.ok()) return Complain(std::string(newest.status().message()));
    f.resume_id = *newest;
  }
  o.session_id = f.resume_id;
  if (prompt->text.empty()) agent::client::ExitWithoutTeardown(RunInteractive(daemon, o));
  o.title = prompt->title;
  int code = RunOneShot(daemon, o, prompt->text);
  if (f.usage) agent::client::PrintTurnUsage();
  agent::client::ExitWithoutTeardown(code);
}
