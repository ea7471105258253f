// The process seam: every program the daemon starts goes through a ProcessRunner, in one of two
// shapes. Run: to its end, its output collected (a hook, git, the sandbox probe). Start: left
// running with its pipes handed over (a bash command and its background jobs, whose output
// streams, tools/subprocess.h; an MCP server over stdio, mcp/stdio_transport.h). One
// implementation starts real processes; tests pass a fake (tests/fakes/fake_process_runner.h)
// to see what would run and to answer as a program would (as a DiskInterface does for the disk
// in ninja, or leveldb's Env).
//
// Every program: argv exec'd directly (no shell, no PATH search), exactly `env` (never the
// daemon's own, which may hold secrets), in `cwd`, every signal at its default and none blocked
// (the daemon ignores SIGPIPE; `yes | head` must not spin), no descriptor of the daemon's but
// its three, in a process group of its own that it leads. Run kills that group whole when the
// program ends or its time is up and reaps what is left (child_reaper.h); a caller of Start
// owns the pid and does the same. Run blocks its calling thread; both are thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/base/unique_fd.h"

namespace agent::daemon {

struct ProcessSpec {
  std::string program;            // absolute path
  std::vector<std::string> argv;  // argv[0] included
  std::string cwd;                // must exist
  std::vector<std::string> env;   // the whole environment, "NAME=value"
  std::string input;              // Run: written to stdin, then it is closed
  // Start: stdin is /dev/null rather than a pipe (a command must not see a pipe to read:
  // `rg pattern` would search an empty stdin instead of the directory).
  bool stdin_null = false;
  std::chrono::milliseconds timeout{0};         // zero: none
  size_t max_output = static_cast<size_t>(-1);  // bytes kept of stdout and of stderr each
};

struct ProcessResult {
  bool exited = false;  // exited normally: exit_code is valid
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;                // killed when its time was up
  std::string out;                       // stdout, capped at max_output
  std::string err;                       // stderr, capped
  bool out_cut = false;                  // stdout had more than max_output
  std::chrono::microseconds elapsed{0};  // from the start to the end
};

// A program started and left running (the Start shape). The descriptors are the daemon's
// ends, close-on-exec and blocking; `in` is closed when stdin is /dev/null.
struct StartedProcess {
  pid_t pid = -1;  // also its process group's id
  UniqueFd in;     // its stdin
  UniqueFd out;    // its stdout
  UniqueFd err;    // its stderr
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // How the program ended (a non-zero exit is a result, not an error). NotFound when the
  // program does not exist, Internal when it cannot be started (a bad cwd, no pipes).
  virtual absl::StatusOr<ProcessResult> Run(const ProcessSpec& spec) const = 0;
  // Starts the program (timeout, input and max_output are the caller's to apply). The caller
  // waits for the pid and ends the group. The same errors as Run.
  virtual absl::StatusOr<StartedProcess> Start(const ProcessSpec& spec) const = 0;
};

// The one that starts real processes.
const ProcessRunner& RealProcessRunner();

}  // namespace agent::daemon
