#include "client/input/project_files.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/time/clock.h"

extern char** environ;

namespace agent::client {
namespace {

constexpr size_t kMaxGitOutput = 8 << 20;

bool Excluded(const std::string& rel) {
  return rel == ".git" || rel.rfind(".git/", 0) == 0 || rel == ".agent/sessions" ||
         rel.rfind(".agent/sessions/", 0) == 0;
}

// Our environment without GIT_* (GIT_DIR, GIT_CONFIG_* … would change what git reads).
std::vector<std::string> GitEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "GIT_", 4) != 0) env.emplace_back(*e);
  }
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  env.emplace_back("GIT_OPTIONAL_LOCKS=0");
  return env;
}

// Reads the child's output until EOF, the deadline or the cap; false unless it got EOF.
bool ReadAll(int fd, absl::Time deadline, std::string* out) {
  char buf[65536];
  for (;;) {  // bounded by the deadline and the cap
    int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0 || out->size() > kMaxGitOutput) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

bool GitLsFiles(const std::string& dir, const ProjectFilesLimits& l,
                std::vector<std::string>* out) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {
      "git", "--no-pager", "-c",  "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C",
      dir,   "ls-files",   "-co", "--exclude-standard",   "-z"};
  std::vector<std::string> env = GitEnvironment();
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, "git", &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return false;
  }
  std::string output;
  bool complete = ReadAll(fds[0], absl::Now() + l.timeout, &output);
  ::close(fds[0]);
  if (!complete) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  std::vector<std::string> files;
  size_t start = 0;
  while (start < output.size() && files.size() < l.max_files) {
    size_t end = output.find('\0', start);
    if (end == std::string::npos) end = output.size();
    std::string path = output.substr(start, end - start);
    if (!path.empty() && !Excluded(path)) files.push_back(std::move(path));
    start = end + 1;
  }
  std::sort(files.begin(), files.end());
  *out = std::move(files);
  return true;
}

std::vector<std::string> WalkProjectFiles(const std::string& dir, const ProjectFilesLimits& l) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  absl::Time deadline = absl::Now() + l.timeout;
  size_t visited = 0;
  // Bounded: by entries visited, by count and by time.
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++visited > l.max_files * 4 || files.size() >= l.max_files) break;
    if ((visited & 255) == 0 && absl::Now() > deadline) break;
    std::string rel = it->path().lexically_relative(dir).generic_string();
    std::error_code tec;
    bool is_dir = it->is_directory(tec) && !it->is_symlink(tec);
    if (Excluded(rel) || (is_dir && it.depth() + 1 >= l.max_depth)) {
      if (is_dir) it.disable_recursion_pending();
      continue;
    }
    if (!is_dir) files.push_back(std::move(rel));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> ListProjectFiles(const std::string& dir, const ProjectFilesLimits& l) {
  std::vector<std::string> files;
  if (GitLsFiles(dir, l, &files)) return files;
  return WalkProjectFiles(dir, l);
}

}  // namespace agent::client
