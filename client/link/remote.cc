#include "client/link/remote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/terminal/show_controls.h"
#include "client/terminal/terminal_text.h"
#include "common/config.h"
#include "common/tool_env.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// Bytes of a remote login's chatter (a noisy shell rc) shown before the reply is given up on.
constexpr size_t kMaxChatter = 64 * 1024;

std::optional<RemoteTarget>& Target() {
  static std::optional<RemoteTarget> target;
  return target;
}

std::optional<ProxyReply>& LastReply() {
  static std::optional<ProxyReply> reply;
  return reply;
}

// The ssh process of one connection: ended and reaped with it.
class RemoteLink {
 public:
  explicit RemoteLink(pid_t pid) : pid_(pid) {}
  ~RemoteLink() { End(); }
  RemoteLink(const RemoteLink&) = delete;
  RemoteLink& operator=(const RemoteLink&) = delete;

  // ssh's exit status once it has ended (at most `wait` from now), else -1.
  int ExitCode(absl::Duration wait) {
    if (exited_) return code_;
    absl::Time until = absl::Now() + wait;
    for (;;) {  // bounded by `wait`
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || (r < 0 && errno != EINTR)) {
        exited_ = true;
        code_ = r == pid_ && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return code_;
      }
      if (absl::Now() >= until) return -1;
      ::poll(nullptr, 0, 10);
    }
  }

  void End() {
    if (exited_) return;
    ::kill(pid_, SIGTERM);
    if (ExitCode(absl::Seconds(1)) < 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ExitCode(absl::Seconds(5));
    }
  }

 private:
  pid_t pid_;
  bool exited_ = false;
  int code_ = -1;
};

// Every link made, so that one whose ssh has died is reaped at the next connection even
// while its Connection is still held (the first one lives in main until the exit).
std::vector<std::weak_ptr<RemoteLink>>& Links() {
  static std::vector<std::weak_ptr<RemoteLink>> links;
  return links;
}

void ReapEndedLinks() {
  std::vector<std::weak_ptr<RemoteLink>>& links = Links();
  for (const std::weak_ptr<RemoteLink>& l : links) {
    if (std::shared_ptr<RemoteLink> link = l.lock()) link->ExitCode(absl::ZeroDuration());
  }
  links.erase(std::remove_if(links.begin(), links.end(), [](const auto& l) { return l.expired(); }),
              links.end());
}

// `name` as execve needs it: as given when it has a '/', else the first executable on PATH.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : std::string(dir), "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

// Starts ssh; with `stdio_fd` >= 0 that fd becomes its stdin and stdout. `quiet_keys`: it
// ignores SIGINT and SIGQUIT (ssh keeps ignored signals ignored), so Ctrl-C reaches the view
// and not the link. `quiet`: its stderr is /dev/null (a reconnect: the screen is the view's).
absl::StatusOr<pid_t> SpawnSsh(std::vector<std::string> argv, int stdio_fd, bool quiet_keys,
                               bool quiet = false) {
  // Everything is built before fork: the child only calls async-signal-safe functions.
  std::string program = FindProgram(argv[0]);
  if (::access(program.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError("cannot run " + argv[0] + " (AGENT_SSH, or ssh on PATH)");
  }
  std::vector<std::string> env = SshEnvironment(ProcessEnvironment());
  std::vector<char*> args, envp;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int devnull = quiet ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  pid_t pid = ::fork();
  if (pid < 0) {
    if (devnull >= 0) ::close(devnull);
    return absl::InternalError("fork failed");
  }
  if (pid == 0) {
    if (devnull >= 0) ::dup2(devnull, 2);
    if (stdio_fd >= 0) {
      ::dup2(stdio_fd, 0);
      ::dup2(stdio_fd, 1);
    }
    if (quiet_keys) {
      ::signal(SIGINT, SIG_IGN);
      ::signal(SIGQUIT, SIG_IGN);
    }
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(program.c_str(), args.data(), envp.data());
    static const char kMsg[] = "agent: cannot run ssh\n";
    ssize_t n = ::write(2, kMsg, sizeof kMsg - 1);
    (void)n;
    ::_exit(127);
  }
  if (devnull >= 0) ::close(devnull);
  return pid;
}

bool SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {  // bounded by the size
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The reply line from `fd`, read without taking a byte past its '\n' (the daemon's first gRPC
// bytes may follow in the same segment). Lines before it are the remote login's chatter and
// go to stderr. Unavailable at EOF.
absl::StatusOr<std::string> ReadReplyLine(int fd, absl::Time deadline, int cancel_fd) {
  size_t chatter = 0;
  std::string line;
  for (;;) {  // bounded by the deadline, kMaxProxyLine and kMaxChatter
    pollfd p[2] = {{fd, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) return absl::DeadlineExceededError("no answer");
    int r = ::poll(p, cancel_fd >= 0 ? 2 : 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::InternalError("poll failed");
    if (cancel_fd >= 0 && (p[1].revents & POLLIN)) return absl::CancelledError("cancelled");
    if (r == 0 || p[0].revents == 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the link closed");
    std::string_view got(buf, static_cast<size_t>(n));
    size_t nl = got.find('\n');
    size_t take = nl == std::string_view::npos ? got.size() : nl + 1;
    n = ::recv(fd, buf, take, 0);
    if (n <= 0) return absl::UnavailableError("the link closed");
    line.append(buf, static_cast<size_t>(n));
    if (line.size() > kMaxProxyLine) return absl::InvalidArgumentError("reply line too long");
    if (line.back() != '\n') continue;
    if (line.rfind(kProxyMagic, 0) == 0) return line;
    chatter += line.size();
    if (chatter > kMaxChatter) return absl::InvalidArgumentError("no agent-proxy reply");
    // A remote's clear-screen or title escapes are shown, not applied to this terminal.
    line.pop_back();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string shown = ShowControls(line) + "\n";
    std::fwrite(shown.data(), 1, shown.size(), stderr);
    line.clear();
  }
}

// Why the link closed before a reply, from ssh's exit code.
absl::Status LinkClosed(const RemoteTarget& t, int code) {
  switch (code) {
    case 255:
      return absl::UnavailableError(
          absl::StrCat("ssh to ", t.host, " failed (exit 255; ssh's own message is above)"));
    case 127:
      return absl::FailedPreconditionError(absl::StrCat(
          t.host, " cannot run ", t.remote_bin, ": install agent there or give --remote-bin PATH"));
    case 2:
      return absl::FailedPreconditionError(
          absl::StrCat(t.remote_bin, " on ", t.host,
                       " does not know `agent proxy`: it is older than this client"));
    default:
      return absl::UnavailableError(
          absl::StrCat("the agent proxy on ", t.host, " ended before answering (exit ", code, ")"));
  }
}

}  // namespace

void SetRemoteTarget(std::optional<RemoteTarget> target) {
  Target() = std::move(target);
  LastReply().reset();
}

const RemoteTarget* ActiveRemote() { return Target().has_value() ? &*Target() : nullptr; }

const ProxyReply* RemoteHostInfo() { return LastReply().has_value() ? &*LastReply() : nullptr; }

std::optional<v1::ToolEnvironment> RemoteToolEnvironment() {
  if (!LastReply().has_value()) return std::nullopt;
  const v1::ToolEnvironment& remote = LastReply()->tool_env;
  std::vector<std::string> vars(remote.variables().begin(), remote.variables().end());
  DropEntriesWithValue(&vars, ModelSettingsFromEnv().api_key);
  absl::StatusOr<Config> config = LoadConfig();
  if (config.ok()) DropEntriesWithValue(&vars, config->model.api_key);
  v1::ToolEnvironment e = remote;
  e.clear_variables();
  for (std::string& v : vars) e.add_variables(std::move(v));
  return e;
}

absl::StatusOr<Connection> ConnectRemote(const RemoteTarget& t, const RemoteConnectOptions& o) {
  ReapEndedLinks();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::InternalError("socketpair failed");
  }
  std::string line = RemoteCommandLine(t.remote_bin, {"proxy", "--protocol", "1"});
  absl::StatusOr<pid_t> pid =
      SpawnSsh(SshArgv(t, line, o.batch), sv[1], /*quiet_keys=*/true, /*quiet=*/o.batch);
  ::close(sv[1]);
  if (!pid.ok()) {
    ::close(sv[0]);
    return pid.status();
  }
  auto link = std::make_shared<RemoteLink>(*pid);
  Links().push_back(link);
  ProxyRequest req;
  req.autostart = o.autostart;
  req.dir = t.dir;
  absl::StatusOr<std::string> reply_line =
      SendAll(sv[0], EncodeProxyRequest(req))
          ? ReadReplyLine(sv[0], absl::Now() + o.timeout, o.cancel_fd)
          : absl::UnavailableError("the link closed");
  if (!reply_line.ok()) {
    ::close(sv[0]);
    if (absl::IsUnavailable(reply_line.status())) {
      return LinkClosed(t, link->ExitCode(absl::Seconds(5)));
    }
    if (absl::IsDeadlineExceeded(reply_line.status())) {
      return absl::DeadlineExceededError(
          absl::StrCat("no answer from ", t.host, " within ", absl::FormatDuration(o.timeout)));
    }
    return reply_line.status();
  }
  absl::StatusOr<ProxyReply> reply = DecodeProxyReply(*reply_line);
  if (!reply.ok() || !reply->status.ok()) {
    ::close(sv[0]);
    absl::Status s = reply.ok() ? reply->status : reply.status();
    return absl::Status(s.code(), absl::StrCat(t.host, ": ", s.message()));
  }
  LastReply() = *std::move(reply);
  Connection c = ConnectionOnFd(sv[0]);
  c.link = std::move(link);
  return c;
}

int RunRemoteCommand(const RemoteTarget& t, const std::vector<std::string>& words, bool tty) {
  std::string line = RemoteCommandIn(t.dir, RemoteCommandLine(t.remote_bin, words));
  absl::StatusOr<pid_t> pid = SpawnSsh(SshArgv(t, line, /*batch=*/false, tty), -1, false);
  if (!pid.ok()) {
    std::fprintf(stderr, "agent: %s\n", std::string(pid.status().message()).c_str());
    return 1;
  }
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 255) {
    std::fprintf(stderr, "agent: ssh to %s failed (exit 255)\n", t.host.c_str());
    return 1;
  }
  if (code == 127) std::fprintf(stderr, "agent: %s\n", LinkClosed(t, 127).ToString().c_str());
  return code;
}

}  // namespace agent::client
