#include "client/link/daemon_start.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/paths.h"
#include "common/tool_env.h"

namespace agent::client {
namespace {

// How long a starting daemon may take to say it is ready.
constexpr int kStartTimeoutMs = 10000;

std::string AgentdPath() {
  // Prefer the agentd installed beside this agent, so a build tree uses its own daemon.
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path sibling = self.parent_path() / "agentd";
    if (::access(sibling.c_str(), X_OK) == 0) return sibling.string();
  }
  return "agentd";
}

bool KeepForDaemon(const std::string& name) {
  if (NameLooksSecret(name) || IsPerClientSetting(name)) return false;
  std::string upper = absl::AsciiStrToUpper(name);
  for (const char* exact : {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "SHELL",
                            "TMPDIR", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
                            "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE"}) {
    if (upper == exact) return true;
  }
  for (const char* prefix : {"XDG_", "LC_", "AGENT_"}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return false;
}

// The forked child: detaches once more, wires stdio and execs agentd. Never returns.
[[noreturn]] void ExecDaemon(const std::string& agentd, const std::string& socket_path,
                             const std::string& log_path, int ready_fd, char* const* envp) {
  ::setsid();
  if (::fork() != 0) ::_exit(0);
  int devnull = ::open("/dev/null", O_RDONLY);
  int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (devnull >= 0) ::dup2(devnull, 0);
  if (log >= 0) {
    ::dup2(log, 1);
    ::dup2(log, 2);
  }
  // The ready pipe is the one fd agentd inherits on purpose.
  int fd = ::dup(ready_fd);
  std::string fd_arg = std::to_string(fd);
  const char* argv[] = {agentd.c_str(), "--socket",     socket_path.c_str(),
                        "--ready-fd",   fd_arg.c_str(), nullptr};
  ::execvpe(agentd.c_str(), const_cast<char* const*>(argv), envp);
  std::string msg = "error: cannot run " + agentd + ": " + std::strerror(errno) + "\n";
  ssize_t n = ::write(fd, msg.data(), msg.size());
  (void)n;
  ::_exit(127);
}

// agentd's first line on the ready pipe ("ok ..." or its error), waited for up to the start
// timeout.
std::string ReadReadyLine(int fd) {
  std::string line;
  pollfd p{fd, POLLIN, 0};
  while (line.find('\n') == std::string::npos) {
    int r = ::poll(&p, 1, kStartTimeoutMs);
    if (r <= 0) break;
    char buf[256];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  return line;
}

}  // namespace

std::vector<std::string> DaemonEnvironment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    if (KeepForDaemon(entry.substr(0, eq))) out.push_back(entry);
  }
  return out;
}

absl::Status StartDaemon(const std::string& socket_path) {
  std::string log_dir = StateDir();
  if (auto s = EnsurePrivateDir(log_dir); !s.ok()) return s;
  std::string log_path = log_dir + "/agentd.log";
  std::string agentd = AgentdPath();
  // Built before fork: the child only execs.
  std::vector<std::string> env = DaemonEnvironment(ProcessEnvironment());
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  pid_t child = ::fork();
  if (child < 0) return absl::InternalError("fork failed");
  if (child == 0) ExecDaemon(agentd, socket_path, log_path, ready[1], envp.data());
  ::close(ready[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::string line = ReadReadyLine(ready[0]);
  ::close(ready[0]);
  if (line.rfind("ok", 0) == 0) return absl::OkStatus();
  // "already running" means another client won the race: fine.
  if (line.find("already running") != std::string::npos) return absl::OkStatus();
  if (line.empty()) line = "no answer; see " + log_path;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return absl::UnavailableError(absl::StrCat("agentd did not start: ", line));
}

}  // namespace agent::client
