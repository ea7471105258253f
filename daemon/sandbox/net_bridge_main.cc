// agentd-net-bridge SOCKET -- PROGRAM [ARGS…]: runs inside a confined command's sandbox, whose
// network namespace is empty but for loopback. It listens on 127.0.0.1 (a port the kernel
// picks), points the proxy variables of PROGRAM's environment at it, and carries every
// connection made there to SOCKET, the daemon's proxy for this command (network_proxy.h),
// which decides where it may go. The listener exists before PROGRAM starts, so a command whose
// first act is a connection finds it (no start-up race). PROGRAM runs as the bridge's child;
// the bridge waits for it and ends with its exit status (or its signal).
//
// Deliberately small and without the daemon's libraries (relay.cc is compiled in): it starts
// with every command.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
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
  // The program is the bridge's child (never the other way round: a program that waits for
  // all its children would wait for the bridge), and the bridge ends as the program did.
  const pid_t program = ::fork();
  if (program < 0) return Fail("fork");
  if (program == 0) {
    ::close(listener);
    ::execvp(argv[3], argv + 3);
    std::fprintf(stderr, "agentd-net-bridge: %s: %s\n", argv[3], std::strerror(errno));
    _exit(127);
  }
  // A peer gone mid-relay is an error to the relay, not a death (the program, forked before,
  // keeps the disposition it was given).
  ::signal(SIGPIPE, SIG_IGN);
  try {
    std::thread([listener, socket_path] {
      for (;;) {
        const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) {
          if (errno == EINTR || errno == ECONNABORTED) continue;
          return;
        }
        // Relayed bytes go on at once: a short last piece must not wait for an acknowledgement.
        const int one = 1;
        ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        try {
          std::thread(Carry, client, socket_path).detach();
        } catch (...) {
          ::close(client);
        }
      }
    }).detach();
  } catch (...) {
    // No thread: the program runs without a network, as in a sandbox without the proxy.
  }
  int status = 0;
  while (::waitpid(program, &status, 0) < 0) {
    if (errno != EINTR) return Fail("waitpid");
  }
  if (WIFSIGNALED(status)) {
    // The same end, so that the caller sees how the program ended (no core of our own).
    ::prctl(PR_SET_DUMPABLE, 0);
    ::signal(WTERMSIG(status), SIG_DFL);
    ::kill(::getpid(), WTERMSIG(status));
    _exit(128 + WTERMSIG(status));
  }
  _exit(WEXITSTATUS(status));
}
