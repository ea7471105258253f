// The stdio transport: the server is a child process speaking newline-delimited JSON-RPC on
// its stdin and stdout, started through the process seam (daemon/base/process_runner.h). The
// child runs in a process group of its own with exactly the
// environment given (never the daemon's, which may hold API keys), stdin/stdout on pipes and
// its stderr copied, line by line and capped, to the daemon's log (our stderr). The server's
// exit ends the connection at once (a pidfd), even while a process it started holds its
// stdout. Close, or the end of the connection for any reason, ends the whole group (SIGTERM,
// then SIGKILL) and every descendant that left it with setsid.
//
// A line that is not JSON, a message that is neither an object nor a batch of objects, or a
// line over kMaxMessageBytes ends the connection (on_closed says why): a server that writes
// garbage to stdout cannot be trusted to frame its answers.
//
// Thread-safety: see transport.h. One reader thread per transport.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "daemon/base/process_runner.h"
#include "daemon/mcp/transport.h"

namespace agent::daemon::mcp {

struct StdioOptions {
  std::string command;  // without a slash: found on `search_path` (command_path.h)
  std::vector<std::string> args;
  std::vector<std::string> env;  // the whole environment, "NAME=value"
  std::string cwd;               // must exist
  std::string search_path;       // empty: the daemon's PATH; never the PATH of `env`
  std::string log_name;          // prefix of the stderr lines in the daemon's log
  // When set, the program runs as `wrapper… -- <command's path> args…` (the sandbox's bwrap
  // options, daemon/sandbox/): wrapper[0] is an absolute path.
  std::vector<std::string> wrapper;
  std::string exit_note;  // added to how the server ended (what the sandbox hid from it)
  size_t max_message_bytes = kMaxMessageBytes;
  // What starts the server; null: the real one (tests pass a fake).
  const ProcessRunner* runner = nullptr;
};

class StdioTransport : public Transport {
 public:
  explicit StdioTransport(StdioOptions options);
  ~StdioTransport() override;

  absl::Status Start(Callbacks callbacks) override;
  absl::Status Send(const Json& message) override;
  void Close() override;

  pid_t pid() const { return pid_; }

 private:
  void ReadLoop();
  // Handles one stdout line; false when the connection must end (`why` set).
  bool HandleLine(std::string_view line, absl::Status* why);
  void LogStderr(std::string_view line);
  // Ends the process group and reaps the server; how it ended, or empty.
  std::string KillGroup();

  StdioOptions options_;
  Callbacks callbacks_;
  pid_t pid_ = -1;
  int stdin_fd_ ABSL_GUARDED_BY(write_mu_) = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int wake_[2] = {-1, -1};
  int pidfd_ = -1;  // the server's; -1 on kernels without pidfd_open (EOF alone then)
  Mutex close_mu_;
  std::thread reader_ ABSL_GUARDED_BY(close_mu_);
  bool closed_ ABSL_GUARDED_BY(close_mu_) = false;  // Close ran: Start starts nothing
  Mutex write_mu_;
  absl::Status closed_why_ ABSL_GUARDED_BY(write_mu_);  // set when the reader ends
  int stderr_lines_ = 0;                                // reader thread only
};

}  // namespace agent::daemon::mcp
