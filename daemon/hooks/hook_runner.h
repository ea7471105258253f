// Runs hook commands: `/bin/sh -c <command>` in the session's project (inside the sandbox for
// a project's own hooks: `confine`), the event's JSON on
// stdin, stdout and stderr kept apart and capped, a timeout that kills the hook's whole
// process group (through the process seam, daemon/base/process_runner.h). Several commands of one
// event run in parallel, each on a thread of its own.
//
// RunHooks blocks until every command ended (or was killed); it never throws. Thread-safe:
// independent calls may run at once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "daemon/base/process_runner.h"

namespace agent::daemon::hooks {

// Bytes of stdout and of stderr kept per hook; the rest is read and dropped.
inline constexpr size_t kMaxHookOutput = 64 << 10;

struct HookProcess {
  std::string command;
  std::chrono::milliseconds timeout{60000};
  // The sandbox's bwrap options (daemon/sandbox/): the command runs inside it, with the
  // sandbox's environment. Empty: as it is (the user's own hooks).
  std::vector<std::string> confine = {};
};

struct HookRun {
  bool started = false;  // false: the process could not be started (`error` says why)
  bool exited = false;   // exited normally: exit_code is valid
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;
  std::string out;  // stdout, capped at kMaxHookOutput
  std::string err;  // stderr, capped
  bool out_cut = false;
  std::string error;
  std::chrono::microseconds elapsed{0};  // from spawn to reaping
};

// Runs every command of `procs` with `input` on its stdin, in `cwd`, with exactly `env`
// ("NAME=value"). Results in the order of `procs`.
std::vector<HookRun> RunHooks(const std::vector<HookProcess>& procs, const std::string& input,
                              const std::string& cwd, const std::vector<std::string>& env,
                              const ProcessRunner& runner = RealProcessRunner());

}  // namespace agent::daemon::hooks
