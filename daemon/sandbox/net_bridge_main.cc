// agentd-net-bridge SOCKET -- PROGRAM [ARGS…]: runs inside a confined command's sandbox, whose
// network namespace is empty but for loopback. It listens on 127.0.0.1 (a port the kernel
// picks), points the proxy variables of PROGRAM's environment at it, and carries every
// connection made there to SOCKET, the daemon's proxy for this command (network_proxy.h),
// which decides where it may go. The listener exists before PROGRAM starts, so a command whose
// first act is a connection finds it (no start-up race). The bridge is a child that dies with
// PROGRAM (PR_SET_PDEATHSIG); PROGRAM is exec'd in this process, so its pid and exit status
// are the command's.
//
// Deliberately small and without the daemon's libraries (relay.cc is compiled in): it starts
// with every command.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "daemon/sandbox/relay.h"

namespace {

int Fail(const char* what) {
  std::fprintf(stderr, "agentd-net-bridge: %s: %s\n", what, std::strerror(errno));
  return 127;
}

void Carry(int client, std::string socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  const int proxy = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (proxy < 0 || ::connect(proxy, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (proxy >= 0) ::close(proxy);
    ::close(client);
    return;
  }
  agent::daemon::sandbox::Relay(client, proxy, -1);
  ::close(client);
  ::close(proxy);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
    std::fprintf(stderr, "usage: agentd-net-bridge SOCKET -- PROGRAM [ARGS...]\n");
    return 2;
  }
  const std::string socket_path = argv[1];
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 128) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Fail("cannot listen on 127.0.0.1");
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  // The variables curl, git, pip, npm, yarn, Go, cargo and Python's requests read.
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                           "all_proxy", "npm_config_proxy", "npm_config_https_proxy",
                           "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY"}) {
    ::setenv(name, url.c_str(), 1);
  }
  ::setenv("NO_PROXY", "localhost,127.0.0.1,::1", 1);
  ::setenv("no_proxy", "localhost,127.0.0.1,::1", 1);
  const pid_t program = ::getpid();
  const pid_t bridge = ::fork();
  if (bridge < 0) return Fail("fork");
  if (bridge == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A peer gone mid-relay is an error to the relay, not a death (only here: the program's
    // own disposition stays as it was given).
    ::signal(SIGPIPE, SIG_IGN);
    if (::getppid() != program) _exit(0);  // the program is gone already
    for (;;) {
      const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        _exit(0);
      }
      try {
        std::thread(Carry, client, socket_path).detach();
      } catch (...) {
        ::close(client);
      }
    }
  }
  ::close(listener);
  ::execvp(argv[3], argv + 3);
  return Fail(argv[3]);
}
