// tests/daemon/mcp/fake_http_mcp_server.py, started on 127.0.0.1 (a free port) for one test
// and killed when it ends.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace agent::daemon::mcp {

class FakeHttpServer {
 public:
  FakeHttpServer() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    std::vector<std::string> args = {
        "/usr/bin/python3",
        std::string(AGENT_SOURCE_DIR) + "/tests/daemon/mcp/fake_http_mcp_server.py"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    if (::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (pid_ > 0) port_ = ReadPort(fds[0]);
    ::close(fds[0]);
  }
  ~FakeHttpServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  // 0 when the server did not come up.
  int port() const { return port_; }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/mcp"); }

 private:
  // The "PORT n" line, waited for (bounded).
  static int ReadPort(int fd) {
    std::string line;
    for (int i = 0; i < 200 && line.find('\n') == std::string::npos; ++i) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[64];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    return line.rfind("PORT ", 0) == 0 ? std::atoi(line.c_str() + 5) : 0;
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace agent::daemon::mcp
