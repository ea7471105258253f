#include "daemon/mcp/stdio_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/process_table.h"
#include "common/utf8.h"
#include "daemon/base/child_reaper.h"
#include "daemon/mcp/command_path.h"

namespace agent::daemon::mcp {
namespace {

// Lines of one server's stderr copied to the log before it is only counted.
constexpr int kMaxStderrLines = 2000;
constexpr size_t kMaxStderrLineBytes = 4096;
// How long a write to a server that does not read its stdin may block.
constexpr int kWriteTimeoutMs = 10000;
constexpr auto kKillGrace = std::chrono::milliseconds(300);
// Reads of what a server wrote before it exited: more than a pipe's 64 KiB at 64 KiB a read.
constexpr int kMaxPollsAfterExit = 16;
// The reason when the exit came first; how it exited (KillGroup) replaces it.
constexpr char kServerEnded[] = "the server ended";

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return absl::StrCat("the server exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return absl::StrCat("the server was killed by signal ", WTERMSIG(status));
  return "the server ended";
}

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace

StdioTransport::StdioTransport(StdioOptions options) : options_(std::move(options)) {}

StdioTransport::~StdioTransport() { Close(); }

absl::Status StdioTransport::Start(Callbacks callbacks) {
  // Close may come from another thread at any moment (a server stopped while it starts):
  // the whole start holds close_mu_, and nothing starts once closed.
  MutexLock l(&close_mu_);
  if (closed_) return absl::CancelledError("closed by the daemon");
  callbacks_ = std::move(callbacks);
  absl::StatusOr<std::string> path = FindCommand(
      options_.command, options_.search_path.empty() ? DaemonSearchPath() : options_.search_path);
  if (!path.ok()) return path.status();
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) return Errno("pipe");
  ProcessSpec spec;
  spec.argv = options_.wrapper;
  if (!spec.argv.empty()) spec.argv.push_back("--");
  spec.argv.push_back(options_.wrapper.empty() ? options_.command : *path);
  spec.argv.insert(spec.argv.end(), options_.args.begin(), options_.args.end());
  spec.program = options_.wrapper.empty() ? *path : options_.wrapper.front();
  spec.cwd = options_.cwd;
  spec.env = options_.env;
  const ProcessRunner& runner = options_.runner ? *options_.runner : RealProcessRunner();
  absl::StatusOr<StartedProcess> started = runner.Start(spec);
  if (!started.ok()) {
    return absl::NotFoundError(absl::StrCat("cannot run ", options_.command, " in ",
                                            options_.cwd.empty() ? "." : options_.cwd, ": ",
                                            started.status().message()));
  }
  // A group of its own, which it leads: Close ends every process in it.
  pid_ = started->pid;
  const int in = started->in.Release();
  {
    MutexLock w(&write_mu_);
    stdin_fd_ = in;
  }
  stdout_fd_ = started->out.Release();
  stderr_fd_ = started->err.Release();
  ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) | O_NONBLOCK);
  // Its exit ends the connection even while a process it left behind holds its stdout open.
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  reader_ = std::thread([this] { ReadLoop(); });
  return absl::OkStatus();
}

absl::Status StdioTransport::Send(const Json& message) {
  std::string line = DumpJson(message) + "\n";
  MutexLock l(&write_mu_);
  if (!closed_why_.ok()) return closed_why_;
  if (stdin_fd_ < 0) return absl::UnavailableError("the server is gone");
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(stdin_fd_, line.data() + done, line.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{stdin_fd_, POLLOUT, 0};
      if (::poll(&p, 1, kWriteTimeoutMs) > 0 && (p.revents & POLLOUT) != 0) continue;
      return absl::DeadlineExceededError("the server does not read its input");
    }
    return absl::UnavailableError(
        absl::StrCat("cannot write to the server: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

bool StdioTransport::HandleLine(std::string_view line, absl::Status* why) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return true;
  absl::StatusOr<Json> parsed = ParseJson(line);
  if (!parsed.ok() || !(parsed->is_object() || parsed->is_array())) {
    std::string head = ToValidUtf8(line.substr(0, 120));
    *why = absl::DataLossError(
        absl::StrCat("the server wrote something that is not JSON-RPC to stdout: ", head));
    return false;
  }
  if (parsed->is_array()) {  // a batch (2025-03-26)
    for (Json& m : *parsed) {
      if (!m.is_object()) {
        *why = absl::DataLossError("the server sent a batch with a non-object in it");
        return false;
      }
      callbacks_.on_message(std::move(m));
    }
    return true;
  }
  callbacks_.on_message(std::move(*parsed));
  return true;
}

void StdioTransport::LogStderr(std::string_view line) {
  if (++stderr_lines_ > kMaxStderrLines) return;
  if (line.size() > kMaxStderrLineBytes) line = line.substr(0, kMaxStderrLineBytes);
  std::string text = absl::StrCat("mcp ", options_.log_name, ": ", ToValidUtf8(line), "\n");
  if (stderr_lines_ == kMaxStderrLines)
    text += "mcp " + options_.log_name + ": (more stderr not logged)\n";
  std::cerr << text << std::flush;
}

void StdioTransport::ReadLoop() {
  std::string out_buf, err_buf;
  absl::Status why = absl::OkStatus();
  char chunk[65536];
  bool stop = false;
  bool exited = false;
  int polls_after_exit = 0;  // an orphan that keeps writing cannot keep the connection
  while (!stop) {
    pollfd fds[4] = {{stdout_fd_, POLLIN, 0},
                     {stderr_fd_, POLLIN, 0},
                     {wake_[0], POLLIN, 0},
                     {exited ? -1 : pidfd_, POLLIN, 0}};
    // Once the server exited, only what it wrote before is read: no waiting for more.
    if (::poll(fds, 4, exited ? 0 : -1) < 0) {
      if (errno == EINTR) continue;
      why = Errno("poll");
      break;
    }
    if (fds[2].revents != 0) {
      why = absl::CancelledError("closed by the daemon");
      break;
    }
    if (stderr_fd_ >= 0 && fds[1].revents != 0) {
      ssize_t n = ::read(stderr_fd_, chunk, sizeof chunk);
      if (n <= 0) {
        CloseFd(&stderr_fd_);  // poll skips a negative fd
      } else {
        err_buf.append(chunk, static_cast<size_t>(n));
        for (size_t nl; (nl = err_buf.find('\n')) != std::string::npos; err_buf.erase(0, nl + 1)) {
          LogStderr(std::string_view(err_buf).substr(0, nl));
        }
        if (err_buf.size() > kMaxStderrLineBytes) {
          LogStderr(err_buf);
          err_buf.clear();
        }
      }
    }
    if (fds[3].revents != 0) exited = true;
    const bool drained = fds[0].revents == 0 && (fds[1].revents == 0 || stderr_fd_ < 0);
    if (exited && (drained || ++polls_after_exit > kMaxPollsAfterExit)) {
      why = absl::UnavailableError(kServerEnded);
      break;
    }
    if (fds[0].revents == 0) continue;
    ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = absl::UnavailableError("the server closed its output");
      break;
    }
    size_t scanned = out_buf.size();
    out_buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = out_buf.find('\n', scanned)) != std::string::npos; scanned = nl + 1) {
      if (!HandleLine(std::string_view(out_buf).substr(start, nl - start), &why)) {
        stop = true;
        break;
      }
      start = nl + 1;
    }
    out_buf.erase(0, start);
    if (!stop && out_buf.size() > options_.max_message_bytes) {
      why = absl::ResourceExhaustedError(absl::StrCat("the server sent a message over ",
                                                      options_.max_message_bytes >> 20, " MiB"));
      stop = true;
    }
  }
  {
    MutexLock l(&write_mu_);
    closed_why_ = why.ok() ? absl::UnavailableError("the server is gone") : why;
    CloseFd(&stdin_fd_);
  }
  std::string ended = KillGroup();
  if (absl::IsUnavailable(why) && !ended.empty()) {
    why = absl::UnavailableError(
        why.message() == kServerEnded ? ended : absl::StrCat(why.message(), " (", ended, ")"));
  }
  callbacks_.on_closed(why);
}

std::string StdioTransport::KillGroup() {
  if (pid_ <= 0) return "";
  // Taken before the group is signalled, while the server still parents them: what left the
  // group with setsid is found only through its parent. (Under the sandbox's or the
  // containment's PID namespace, everything ends with the namespace's init anyway.)
  const std::vector<pid_t> descendants = Descendants(ReadProcessTable(), pid_);
  int status = 0;
  pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_) {
    ::kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kKillGrace;
    while ((done = ::waitpid(pid_, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd none{};
      ::poll(&none, 0, 10);
    }
    if (done != pid_) {
      ::kill(-pid_, SIGKILL);
      done = ::waitpid(pid_, &status, 0);
    }
  }
  ::kill(-pid_, SIGKILL);  // whatever the server left behind in its group
  for (pid_t d : descendants) ::kill(d, SIGKILL);
  // As a subreaper the daemon inherits the group's members whose parent died (the wrapper's
  // sandbox init among them, which bwrap does not wait for): zombies unless reaped here.
  ReapGroup(pid_, kKillGrace);
  if (!options_.wrapper.empty()) ReapOrphanedSandboxInits();
  if (done != pid_) return "";
  std::string ended = DescribeExit(status);
  if (!options_.exit_note.empty()) absl::StrAppend(&ended, "; ", options_.exit_note);
  std::cerr << "mcp " << options_.log_name << ": " << ended << "\n" << std::flush;
  return ended;
}

void StdioTransport::Close() {
  MutexLock closing(&close_mu_);  // a second caller waits for the first
  closed_ = true;
  if (reader_.joinable()) {
    char c = 'x';
    ssize_t n = ::write(wake_[1], &c, 1);
    (void)n;
    reader_.join();
  }
  CloseFd(&stdout_fd_);
  CloseFd(&stderr_fd_);
  CloseFd(&wake_[0]);
  CloseFd(&wake_[1]);
  CloseFd(&pidfd_);
  MutexLock l(&write_mu_);
  CloseFd(&stdin_fd_);
}

}  // namespace agent::daemon::mcp
