// agentd: the long-lived daemon. Usually started by the first `agent` (detached), or by the
// systemd user unit; `--foreground` keeps it attached to the terminal for debugging.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "CLI/CLI.hpp"
#include "common/config.h"
#include "common/paths.h"
#include "common/protocol.h"
#include "common/version.h"
#include "daemon/base/child_reaper.h"
#include "daemon/service/server.h"

namespace {

agent::daemon::Server* g_server = nullptr;

void OnSignal(int) {
  if (g_server != nullptr) g_server->RequestShutdown();
}

// systemd socket activation: LISTEN_FDS=1 and LISTEN_PID=us means fd 3 is our socket.
int InheritedSocket() {
  const char* fds = std::getenv("LISTEN_FDS");
  const char* pid = std::getenv("LISTEN_PID");
  if (fds == nullptr || pid == nullptr) return -1;
  if (std::atoi(fds) != 1 || std::atoi(pid) != static_cast<int>(::getpid())) return -1;
  // Not for the tools we run.
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDNAMES");
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  // No core dumps and no same-uid ptrace or /proc/<pid>/{mem,environ} reads: this process
  // holds API keys. Children get it back at exec (they are not set-id programs).
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  CLI::App app{"agentd: the agent daemon; owns sessions, the model transport and tools"};
  std::string socket_path = agent::SocketPath();
  int ready_fd = -1;
  bool version = false;
  app.add_option("--socket", socket_path, "Unix socket to listen on")->capture_default_str();
  app.add_option("--ready-fd", ready_fd, "write 'ok' to this fd once accepting (used by agent)");
  app.add_flag("--version", version, "print the version and exit");
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::printf("agentd %s (git %s, protocol %d)\n", agent::kVersion, agent::kGitRevision,
                agent::kProtocolVersion);
    return 0;
  }
  auto config = agent::LoadConfig();
  if (!config.ok()) {
    std::fprintf(stderr, "agentd: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Orphaned grandchildren of tools become ours, so a cancelled group is reaped at once
  // instead of lingering until init gets to it.
  (void)agent::daemon::BecomeChildSubreaper();  // best effort: older kernels lack it
  agent::daemon::ServerOptions options;
  options.socket_path = socket_path;
  options.inherited_fd = InheritedSocket();
  options.ready_fd = ready_fd;
  options.config = *config;
  agent::daemon::Server server(std::move(options));
  g_server = &server;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  absl::Status s = server.Run();
  g_server = nullptr;
  if (!s.ok()) {
    std::fprintf(stderr, "agentd: %s\n", std::string(s.message()).c_str());
    return absl::IsAlreadyExists(s) ? 3 : 1;
  }
  return 0;
}
