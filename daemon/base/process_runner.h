// The process seam: how the daemon runs a short-lived program to its end (a hook, git for the
// checkpoints). One implementation starts real processes; tests pass a fake to see what would
// run and to answer as a program would, without starting one (as a DiskInterface does for the
// disk in ninja, or leveldb's Env).
//
// The real runner: argv exec'd directly (no shell, no PATH search), exactly `env`, in `cwd`,
// `input` on stdin (a program need not read it), stdout and stderr kept apart and capped, in a
// process group of its own that is killed whole when the program ends or its time is up.
// Blocks its calling thread; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon {

struct ProcessSpec {
  std::string program;                          // absolute path
  std::vector<std::string> argv;                // argv[0] included
  std::string cwd;                              // must exist
  std::vector<std::string> env;                 // the whole environment, "NAME=value"
  std::string input;                            // written to stdin, then it is closed
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

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // How the program ended (a non-zero exit is a result, not an error). NotFound when the
  // program does not exist, Internal when it cannot be started (a bad cwd, no pipes).
  virtual absl::StatusOr<ProcessResult> Run(const ProcessSpec& spec) const = 0;
};

// The one that starts real processes.
const ProcessRunner& RealProcessRunner();

}  // namespace agent::daemon
