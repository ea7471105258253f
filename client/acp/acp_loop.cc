#include "client/acp/acp_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/acp/acp_agent.h"
#include "client/acp/json_rpc.h"
#include "client/commands/cli.h"

namespace agent::client {
namespace {

// Writes all of `line` to `fd`; false when the editor has gone (EPIPE) or another error.
bool WriteAll(int fd, const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Takes stdout for the protocol and points fd 1 at stderr, so that nothing printed by
// mistake can corrupt the stream the editor parses.
int TakeStdout() {
  std::fflush(stdout);
  int out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (out >= 0) ::dup2(2, 1);
  return out;
}

int Loop(acp::AcpAgent& agent) {
  acp::LineReader reader;
  std::vector<char> buf(64 * 1024);
  for (;;) {
    std::vector<acp::AcpSession*> sessions = agent.Sessions();
    std::vector<pollfd> fds = {{0, POLLIN, 0}};
    for (acp::AcpSession* s : sessions) fds.push_back({s->fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return Complain(std::string("poll: ") + std::strerror(errno));
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) sessions[i - 1]->Drain();
    }
    if (fds[0].revents == 0) continue;
    ssize_t n = ::read(0, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return kExitDone;  // the editor closed: detach, the turns go on
    for (const acp::LineReader::Line& line : reader.Feed(std::string_view(buf.data(), n))) {
      agent.OnLine(line);
    }
  }
}

}  // namespace

bool IsAcpCommand(const char* word) { return std::strcmp(word, "acp") == 0; }

int RunAcp(int argc, char** argv) {
  CLI::App app{"agent acp: the Agent Client Protocol on stdin/stdout, for editors"};
  app.name("agent acp");
  if (std::optional<int> code = ParseSubcommand(app, argc, argv)) return *code;
  // The editor closing its end must be an error to write, not a signal that kills us.
  ::signal(SIGPIPE, SIG_IGN);
  int out = TakeStdout();
  if (out < 0) return Complain("cannot take stdout for the protocol");
  absl::StatusOr<ClientOptions> options =
      BaseOptions(/*json=*/false, /*yes=*/false, /*plain=*/true);
  if (!options.ok()) return Complain(std::string(options.status().message()), kExitUsage);
  Connection daemon = ConnectForProject(*options);
  bool editor_gone = false;
  acp::AcpAgent agent(daemon, *std::move(options), [out, &editor_gone](const std::string& line) {
    if (!editor_gone && !WriteAll(out, line)) editor_gone = true;
  });
  int code = Loop(agent);
  ExitWithoutTeardown(code);
}

}  // namespace agent::client
