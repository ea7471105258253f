#include "client/commands/trust_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "client/commands/cli.h"
#include "client/terminal/terminal_text.h"
#include "client/terminal/yes_no.h"
#include "client/text/checkpoint_text.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr auto kCallDeadline = std::chrono::seconds(30);

int Revoke(v1::AgentDaemon::Stub& stub, const std::string& workdir) {
  absl::StatusOr<v1::TrustProjectRulesResponse> done = CallTrust(stub, workdir, {}, true);
  if (!done.ok()) return Complain(std::string(done.status().message()));
  std::printf("%d rule(s) no longer trusted for this project\n", done->changed_size());
  return kExitDone;
}

int Trust(v1::AgentDaemon::Stub& stub, const std::string& workdir, bool yes) {
  absl::StatusOr<v1::TrustProjectRulesResponse> listed = CallTrust(stub, workdir, {}, false);
  if (!listed.ok()) return Complain(std::string(listed.status().message()));
  if (listed->untrusted().empty()) {
    std::printf("every allow rule of %s is trusted\n", Visible(listed->settings_path()).c_str());
    return kExitDone;
  }
  std::fputs(UntrustedRulesList(*listed).c_str(), stdout);
  if (!yes) {
    if (!isatty(0)) {
      return Complain("not trusted: no terminal to ask on; run again with --yes to trust them");
    }
    if (!AskYes("trust these rules for this project?")) {
      std::printf("nothing trusted\n");
      return kExitCancelled;
    }
  }
  // Exactly the rules shown: one added to the file meanwhile is not trusted with them.
  const std::vector<std::string> shown(listed->untrusted().begin(), listed->untrusted().end());
  absl::StatusOr<v1::TrustProjectRulesResponse> done = CallTrust(stub, workdir, shown, false);
  if (!done.ok()) return Complain(std::string(done.status().message()));
  std::printf("trusted %d rule(s) for this project\n", done->changed_size());
  return kExitDone;
}

// `--sessions`: an older agentd's sessions in .agent/sessions/ are taken only by a person:
// listed, asked about as rules are, then moved.
int ImportSessions(v1::AgentDaemon::Stub& stub, const std::string& workdir, bool yes) {
  std::vector<std::string> shown;  // the ids listed: exactly those are taken
  auto call = [&](bool import) -> absl::StatusOr<v1::TrustProjectRulesResponse> {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    v1::TrustProjectRulesRequest req;
    req.set_workdir(workdir);
    if (import) {
      req.set_import_sessions(true);
      for (const std::string& id : shown) req.add_session_ids(id);
    } else {
      req.set_list_sessions(true);
    }
    v1::TrustProjectRulesResponse resp;
    grpc::Status s = stub.TrustProjectRules(&ctx, req, &resp);
    if (!s.ok()) return absl::FailedPreconditionError(TerminalSafe(s.error_message()));
    return resp;
  };
  absl::StatusOr<v1::TrustProjectRulesResponse> listed = call(false);
  if (!listed.ok()) return Complain(std::string(listed.status().message()));
  if (listed->sessions().empty()) {
    std::printf("no session of an older agentd to take in this project's .agent/sessions/\n");
    return kExitDone;
  }
  std::printf("%d session(s) of an older agentd in .agent/sessions/ name this checkout:\n",
              listed->sessions_size());
  for (const std::string& s : listed->sessions()) {
    std::printf("  %s\n", Visible(s).c_str());
    shown.push_back(s.substr(0, s.find(' ')));
  }
  if (!yes) {
    if (!isatty(0)) return Complain("not taken: no terminal to ask on; run again with --yes");
    if (!AskYes("take them as this project's sessions? (a repository can ship such files)")) {
      std::printf("nothing taken\n");
      return kExitCancelled;
    }
  }
  absl::StatusOr<v1::TrustProjectRulesResponse> done = call(true);
  if (!done.ok()) return Complain(std::string(done.status().message()));
  std::printf("%s\n", Visible(done->sessions_note()).c_str());
  return kExitDone;
}

}  // namespace

absl::StatusOr<v1::TrustProjectRulesResponse> CallTrust(v1::AgentDaemon::Stub& stub,
                                                        const std::string& workdir,
                                                        const std::vector<std::string>& rules,
                                                        bool revoke) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::TrustProjectRulesRequest req;
  req.set_workdir(workdir);
  for (const std::string& r : rules) req.add_rules(r);
  req.set_revoke(revoke);
  v1::TrustProjectRulesResponse resp;
  grpc::Status s = stub.TrustProjectRules(&ctx, req, &resp);
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return absl::UnimplementedError(
        "this agentd cannot trust rules (restart it: agent daemon stop)");
  }
  if (!s.ok()) return absl::FailedPreconditionError(TerminalSafe(s.error_message()));
  return resp;
}

std::string UntrustedRulesList(const v1::TrustProjectRulesResponse& listed) {
  std::string out =
      absl::StrCat(Visible(listed.settings_path()), " allows ", listed.untrusted_size(),
                   " rule(s) you have not trusted for this project:\n");
  for (const std::string& r : listed.untrusted()) absl::StrAppend(&out, "  ", Visible(r), "\n");
  return out;
}

int RunTrustSubcommand(int argc, char** argv) {
  bool yes = false;
  bool revoke = false;
  bool sessions = false;
  CLI::App app{"Trust the allow rules of this project's .agent/settings.json."};
  app.name("agent trust");
  app.add_flag("-y,--yes", yes, "trust the rules listed without asking");
  app.add_flag("--revoke", revoke, "forget every rule trusted for this project");
  app.add_flag("--sessions", sessions,
               "take the sessions an older agentd kept in .agent/sessions/ (listed, then asked)");
  ClientOptions options;
  if (std::optional<int> code = ParseSubcommand(app, argc, argv, &options)) return *code;
  Connection daemon = ConnectForProject(options);
  const std::string workdir = options.project.root;
  ExitWithoutTeardown(sessions ? ImportSessions(*daemon.stub, workdir, yes)
                      : revoke ? Revoke(*daemon.stub, workdir)
                               : Trust(*daemon.stub, workdir, yes));
}

}  // namespace agent::client
