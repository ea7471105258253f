// Runs one shell command for the bash tool: `/bin/bash -c <command>`, started through the
// process seam (daemon/base/process_runner.h) in its own process group,
// cwd set, the environment given (never the daemon's own), stdin /dev/null, stdout and stderr
// on separate close-on-exec pipes read with poll(). Output becomes valid UTF-8 text as it
// arrives (invalid bytes turn into U+FFFD; a character split between reads is joined), streams
// through a callback and is kept capped (head + tail). A timeout
// or a cancel flag ends the whole group: SIGTERM, then SIGKILL after a grace period, so
// grandchildren die too. When bash itself exits, whatever is left in its group (background
// jobs) gets the same treatment and the pipes are drained for a bounded time, so a stray
// `sleep 60 &` (or a process that left the group but kept the pipes) cannot hang the tool.
//
// RunSubprocess blocks its calling thread; run it on a worker. Independent calls may run
// concurrently. The callback runs on the calling thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/base/process_runner.h"

namespace agent::daemon::tools {

struct SubprocessOptions {
  std::string command;  // given to /bin/bash -c
  // When set, the program run instead of `/bin/bash -c command` (the sandbox's
  // `bwrap … -- /bin/bash -c command`): argv[0] is its absolute path.
  std::vector<std::string> argv;
  std::string cwd;  // must exist
  // The command's whole environment, "NAME=value" entries. Empty: MinimalToolEnvironment()
  // (common/tool_env.h). This process's own environment is never passed on.
  std::vector<std::string> env;
  // Zero or negative: no timeout.
  std::chrono::milliseconds timeout{0};
  // Polled at least every 20 ms; may be null.
  const std::atomic<bool>* cancelled = nullptr;
  // The output as it arrives, per pipe; may be empty. Chunks are valid UTF-8 and never split
  // a character.
  std::function<void(std::string_view chunk, bool is_stderr)> on_output;
  // The output kept for the result: the first and the last bytes of it.
  size_t head_bytes = 16 << 10;
  size_t tail_bytes = 16 << 10;
  // Between SIGTERM and SIGKILL.
  std::chrono::milliseconds kill_grace{100};
  // How long the pipes may stay open once the group is gone (a process that escaped the
  // group with setsid can hold them).
  std::chrono::milliseconds drain_limit{200};
  // How long members already sent SIGKILL are waited for: they cannot refuse it, they only
  // need the CPU to die (a loaded machine) or to leave a stuck disk wait.
  std::chrono::milliseconds kill_wait{5000};
  // What starts the command; null: the real one (tests pass a fake).
  const ProcessRunner* runner = nullptr;
};

struct SubprocessResult {
  pid_t pid = -1;       // bash's pid, which is also the process group id
  bool exited = false;  // exited normally: exit_code is valid
  int exit_code = -1;
  int term_signal = 0;  // bash was killed by this signal
  bool timed_out = false;
  bool cancelled = false;
  // stdout and stderr interleaved in the order they arrived, capped; valid UTF-8.
  std::string output;
  uint64_t output_bytes = 0;   // every byte the command wrote
  uint64_t omitted_bytes = 0;  // bytes of the repaired text left out of `output`
  std::chrono::milliseconds elapsed{0};
};

// Runs options.command. The result describes how it ended (a non-zero exit is not an error
// here). kInternal / kNotFound when the process cannot be started (bad cwd, no /bin/bash).
absl::StatusOr<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

}  // namespace agent::daemon::tools
