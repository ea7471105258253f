#include "client/commands/sandbox_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "client/commands/session_calls.h"
#include "client/link/connection.h"
#include "client/link/project_root.h"
#include "client/text/session_table.h"
#include "common/paths.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr char kUsage[] =
    "usage: agent sandbox [--network] [--timeout S] -- CMD ARGS…\n"
    "       agent sandbox --check\n";

int Usage(const std::string& problem) {
  std::fprintf(stderr, "agent sandbox: %s\n%s", problem.c_str(), kUsage);
  return kExitUsage;
}

int Check(const v1::RunSandboxedResponse& r) {
  std::printf("sandbox: %s\n", PrintableLine(r.sandbox()).c_str());
  if (!r.problem().empty()) {
    std::printf("commands are asked about instead of running confined: %s\n",
                PrintableLine(r.problem()).c_str());
  } else if (r.confines()) {
    const bool all = r.sandbox().find("network on") != std::string::npos;
    const bool listed = r.sandbox().find("allowed domain") != std::string::npos;
    std::printf(
        "bash commands run in bubblewrap: the project writable, .agent/ and what git reads as "
        "configuration read-only, a private /tmp, %s, own PID namespace, no new privileges\n",
        all      ? "the host's network"
        : listed ? "the allowed hosts through a proxy"
                 : "no network");
    for (const std::string& h : r.hidden()) std::printf("hidden: %s\n", PrintableLine(h).c_str());
  }
  return r.confines() ? 0 : kExitError;
}

}  // namespace

int SandboxCommand(int argc, char** argv) {
  v1::RunSandboxedRequest req;
  bool check = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--check") {
      check = true;
    } else if (a == "--network") {
      req.set_network(true);
    } else if (a == "--timeout" && i + 1 < argc) {
      req.set_timeout_s(std::atoi(argv[++i]));
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return Usage("unknown option " + a);
    } else {
      break;  // the command, without a `--`
    }
  }
  for (; i < argc; ++i) req.add_argv(argv[i]);
  if (check != req.argv().empty()) return Usage(check ? "--check runs nothing" : "no command");
  const ProjectDirs here = ProjectHere();
  req.set_workdir(here.root);
  req.set_cwd(here.cwd);
  req.set_check(check);
  *req.mutable_tool_env() = ToolEnvFromProcess();
  auto daemon = Connect(ConnectOptions{SocketPath(), true});
  if (!daemon.ok()) {
    std::fprintf(stderr, "agent sandbox: %s\n", std::string(daemon.status().message()).c_str());
    return kExitError;
  }
  grpc::ClientContext ctx;
  v1::RunSandboxedResponse resp;
  grpc::Status st = daemon->stub->RunSandboxed(&ctx, req, &resp);
  if (!st.ok()) {
    std::fprintf(stderr, "agent sandbox: %s\n", st.error_message().c_str());
    return kExitError;
  }
  if (check) return Check(resp);
  std::fwrite(resp.output().data(), 1, resp.output().size(), stdout);
  std::fflush(stdout);
  return resp.exit_code();
}

}  // namespace agent::client
