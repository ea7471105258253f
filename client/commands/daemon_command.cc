#include "client/commands/daemon_command.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "client/commands/cli.h"
#include "client/commands/session_calls.h"
#include "client/link/connection.h"
#include "client/terminal/terminal_text.h"
#include "client/terminal/yes_no.h"
#include "client/text/checkpoint_text.h"
#include "client/text/session_table.h"
#include "common/paths.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// How long `agent daemon stop` waits for the daemon to exit (it seals running turns first).
constexpr int kStopWaitMs = 15000;

// True while process `pid` exists and is not a zombie (a daemon whose parent never reaps it
// has exited all the same).
bool ProcessRuns(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

// The sessions of every project whose turn runs or waits for an answer: what a stop cancels.
std::vector<v1::Session> RunningSessions(v1::AgentDaemon::Stub& stub) {
  grpc::ClientContext ctx;
  v1::ListSessionsRequest req;
  req.set_all(true);
  v1::ListSessionsResponse resp;
  std::vector<v1::Session> out;
  if (!stub.ListSessions(&ctx, req, &resp).ok()) return out;  // the stop says what fails
  for (const v1::Session& s : resp.sessions()) {
    if (s.state() == v1::SESSION_STATE_RUNNING || s.state() == v1::SESSION_STATE_WAITING_APPROVAL) {
      out.push_back(s);
    }
  }
  return out;
}

// True when the stop may go on: no turn runs, `force`, or a person said yes.
bool MayCancel(v1::AgentDaemon::Stub& stub, bool force) {
  std::vector<v1::Session> running = RunningSessions(stub);
  if (running.empty() || force) return true;
  std::fputs(RunningTurnsText(running).c_str(), stderr);
  if (isatty(0) == 0 || isatty(1) == 0) {
    Complain("not stopped: agent daemon stop --force cancels them");
    return false;
  }
  if (AskYes(running.size() == 1 ? "Cancel it and stop agentd?" : "Cancel them and stop agentd?")) {
    return true;
  }
  Complain("not stopped");
  return false;
}

int StopDaemon(v1::AgentDaemon::Stub& stub, const std::string& socket, bool force) {
  grpc::ClientContext status_ctx;
  v1::DaemonStatusResponse st;
  if (!stub.DaemonStatus(&status_ctx, v1::DaemonStatusRequest(), &st).ok()) st.Clear();
  if (st.socket_activated()) {
    std::printf(
        "agentd runs under systemd (socket activation); stop it with:\n"
        "  systemctl --user stop agentd.socket agentd.service\n");
    return kExitError;
  }
  if (!MayCancel(stub, force)) return kExitError;
  grpc::ClientContext ctx;
  v1::ShutdownResponse resp;
  grpc::Status s = stub.Shutdown(&ctx, v1::ShutdownRequest(), &resp);
  if (!s.ok()) return Complain(s.error_message());
  // Returns once the daemon is gone, so that the next command starts a fresh one and no
  // client connects to a daemon on its way out. Polled: it is not our child.
  const int pid = st.pid();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStopWaitMs);
  while (std::chrono::steady_clock::now() < deadline) {
    bool running = pid > 0 ? ProcessRuns(pid) : DaemonAnswers(socket);
    if (!running) {
      std::printf("agentd stopped\n");
      // Said plainly: what the daemon could not write is lost with it.
      for (const std::string& u : resp.unsaved()) {
        Complain(absl::StrCat("session ", Visible(u),
                              " (its newest messages could not be saved and are lost)"));
      }
      return resp.unsaved().empty() ? kExitDone : kExitError;
    }
    ::usleep(10000);
  }
  return Complain(absl::StrCat("agentd (pid ", pid, ") has not exited after ", kStopWaitMs / 1000,
                               " s; it may still be ending a turn (see agentd.log)"));
}

}  // namespace

std::string RunningTurnsText(const std::vector<v1::Session>& running) {
  std::string out =
      absl::StrCat("agentd is running ", running.size(), running.size() == 1 ? " turn" : " turns",
                   "; stopping it cancels ", running.size() == 1 ? "it" : "them", ":\n");
  for (const v1::Session& s : running) {
    absl::StrAppend(&out, "  ", s.id().substr(0, 8), "  ", StateName(s.state()), "  ",
                    FitColumns(PrintableLine(s.title()), 50), "  (", PrintableLine(s.workdir()),
                    ")\n");
  }
  return out;
}

int DaemonCommand(const std::string& what, bool force) {
  std::string socket = SocketPath();
  if (!DaemonAnswers(socket)) {
    std::printf("agentd is not running (socket %s)\n", socket.c_str());
    return what == "status" ? kExitError : kExitDone;
  }
  Connection daemon = ConnectOrExit(false);
  v1::AgentDaemon::Stub& stub = *daemon.stub;
  if (what == "stop") return StopDaemon(stub, socket, force);
  grpc::ClientContext ctx;
  v1::DaemonStatusResponse st;
  grpc::Status s = stub.DaemonStatus(&ctx, v1::DaemonStatusRequest(), &st);
  if (!s.ok()) return Complain(s.error_message());
  std::printf("agentd %s  pid %d  up %llds  sessions %d  clients %d  protocol %d\nsocket %s\n",
              st.version().c_str(), st.pid(), static_cast<long long>(st.uptime_ms() / 1000),
              st.sessions_loaded(), st.clients_attached(), st.protocol_version(), socket.c_str());
  std::printf("%s\n", StoreSizeLine(st.checkpoint_store_bytes()).c_str());
  if (!st.sandbox().empty()) std::printf("sandbox: %s\n", PrintableLine(st.sandbox()).c_str());
  for (const std::string& p : st.problems()) std::printf("problem: %s\n", p.c_str());
  return kExitDone;
}

}  // namespace agent::client
