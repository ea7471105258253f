#include "daemon/checkpoints/git_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace agent::daemon::checkpoints {
namespace {

// What makes git run a program or read configuration the project controls.
const char* const kSafeConfig[] = {"core.hooksPath=/dev/null",
                                   "core.fsmonitor=false",
                                   "core.autocrlf=false",
                                   "core.safecrlf=false",
                                   "core.symlinks=true",
                                   "core.filemode=true",
                                   "core.quotepath=false",
                                   "core.untrackedCache=true",
                                   "gc.auto=0",
                                   "safe.directory=*",
                                   "diff.external=",
                                   "core.pager=cat",
                                   "core.askPass=",
                                   "index.threads=1",
                                   "advice.addEmbeddedRepo=false",
                                   "core.bigFileThreshold=16m"};

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void Close(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

// Feeds `input` and drains stdout and stderr with poll() so neither side can block the other.
void Pump(Pipe& in, Pipe& out, Pipe& err, const std::string& input, std::string* out_text,
          std::string* err_text) {
  size_t written = 0;
  if (input.empty()) in.Close(1);
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    pollfd p[3];
    int n = 0;
    if (in.fd[1] >= 0) p[n++] = {in.fd[1], POLLOUT, 0};
    if (out.fd[0] >= 0) p[n++] = {out.fd[0], POLLIN, 0};
    if (err.fd[0] >= 0) p[n++] = {err.fd[0], POLLIN, 0};
    if (::poll(p, n, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (p[i].revents == 0) continue;
      if (p[i].fd == in.fd[1]) {
        ssize_t w = ::write(in.fd[1], input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = input.size();
        if (written >= input.size()) in.Close(1);
        continue;
      }
      Pipe& src = p[i].fd == out.fd[0] ? out : err;
      std::string* dst = p[i].fd == out.fd[0] ? out_text : err_text;
      ssize_t r = ::read(src.fd[0], buf, sizeof buf);
      if (r > 0) {
        dst->append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        src.Close(0);
      }
    }
  }
}

}  // namespace

std::vector<std::string> GitEnvironment(const std::string& git_dir, const std::string& work_tree) {
  return {"GIT_DIR=" + git_dir,
          "GIT_WORK_TREE=" + work_tree,
          "GIT_INDEX_FILE=" + git_dir + "/index",
          "GIT_CONFIG_NOSYSTEM=1",
          "GIT_CONFIG_GLOBAL=/dev/null",
          "GIT_ATTR_NOSYSTEM=1",
          "GIT_NO_REPLACE_OBJECTS=1",
          "GIT_TERMINAL_PROMPT=0",
          "GIT_OPTIONAL_LOCKS=0",
          "HOME=" + git_dir,
          "PATH=/usr/local/bin:/usr/bin:/bin",
          "LC_ALL=C"};
}

static const std::string& GitPath() {
  // Never a search of the daemon's PATH: the child runs in the project, so an empty or
  // relative entry there would run the repository's own `git`.
  static const std::string path = [] {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
      std::string candidate = std::string(dir) + "/git";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::string();
  }();
  return path;
}

absl::StatusOr<std::string> RunGit(const GitCall& call) {
  const std::string& git = GitPath();
  if (git.empty()) return absl::NotFoundError("git is not installed");
  std::vector<std::string> argv = {"git"};
  for (const char* c : kSafeConfig) {
    argv.push_back("-c");
    argv.push_back(c);
  }
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  std::vector<std::string> env = GitEnvironment(call.git_dir, call.work_tree);
  std::vector<char*> cargv, cenv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (std::string& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 ||
      ::pipe2(err.fd, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  ::posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  ::posix_spawn_file_actions_addchdir_np(&actions, call.work_tree.c_str());
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, git.c_str(), &actions, &attr, cargv.data(), cenv.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return rc == ENOENT ? absl::NotFoundError("git is not installed")
                        : absl::InternalError(absl::StrCat("git: ", std::strerror(rc)));
  }
  in.Close(0);
  out.Close(1);
  err.Close(1);
  // Writes to a git that exited early must fail with EPIPE, not kill the daemon.
  ::fcntl(in.fd[1], F_SETFL, ::fcntl(in.fd[1], F_GETFL) | O_NONBLOCK);
  std::string stdout_text, stderr_text;
  Pump(in, out, err, call.input, &stdout_text, &stderr_text);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return stdout_text;
  if (stderr_text.size() > 2000) stderr_text.resize(2000);
  return absl::InternalError(
      absl::StrCat("git ", absl::StrJoin(call.args, " "), " failed: ", stderr_text));
}

}  // namespace agent::daemon::checkpoints
