#include "daemon/hooks/hook_runner.h"

#include <system_error>
#include <thread>

#include "daemon/sandbox/bwrap_argv.h"

namespace agent::daemon::hooks {
namespace {

HookRun RunOne(const HookProcess& proc, const std::string& input, const std::string& cwd,
               const std::vector<std::string>& env, const ProcessRunner& runner) {
  ProcessSpec spec;
  spec.program = "/bin/sh";
  spec.argv = {"/bin/sh", "-c", proc.command};
  spec.cwd = cwd;
  spec.env = env;
  if (!proc.confine.empty()) {
    spec.program = proc.confine[0];
    std::vector<std::string> argv = proc.confine;
    argv.push_back("--");
    argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
    spec.argv = std::move(argv);
    spec.env = sandbox::SandboxEnvironment(env);
  }
  spec.input = input;
  spec.timeout = proc.timeout;
  spec.max_output = kMaxHookOutput;
  HookRun run;
  absl::StatusOr<ProcessResult> r = runner.Run(spec);
  if (!r.ok()) {
    run.error = std::string(r.status().message());
    return run;
  }
  run.started = true;
  run.exited = r->exited;
  run.exit_code = r->exit_code;
  run.term_signal = r->term_signal;
  run.timed_out = r->timed_out;
  run.out = std::move(r->out);
  run.err = std::move(r->err);
  run.out_cut = r->out_cut;
  run.elapsed = r->elapsed;
  return run;
}

}  // namespace

std::vector<HookRun> RunHooks(const std::vector<HookProcess>& procs, const std::string& input,
                              const std::string& cwd, const std::vector<std::string>& env,
                              const ProcessRunner& runner) {
  std::vector<HookRun> runs(procs.size());
  if (procs.size() == 1) {
    runs[0] = RunOne(procs[0], input, cwd, env, runner);
    return runs;
  }
  std::vector<std::thread> threads;
  for (size_t i = 1; i < procs.size(); ++i) {
    try {
      threads.emplace_back([&, i] { runs[i] = RunOne(procs[i], input, cwd, env, runner); });
    } catch (const std::system_error&) {
      runs[i] = RunOne(procs[i], input, cwd, env, runner);  // out of threads: in turn
    }
  }
  runs[0] = RunOne(procs[0], input, cwd, env, runner);
  for (std::thread& t : threads) t.join();
  return runs;
}

}  // namespace agent::daemon::hooks
