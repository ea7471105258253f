// bash {command, timeout_s?, background?, escalate?, justification?}: runs the command with
// /bin/bash -c in the project directory (see subprocess.h) with the environment ctx.env, inside
// the sandbox (daemon/sandbox/) whenever it confines (git's control files protected, the
// network through a proxy of its own when the user allows domains: Confine below); `escalate: true`
// runs it outside, which the policy lets happen only with a person's answer
// (daemon/policy/escalation.h). Output streams to ctx.on_output while it runs; the result holds the
// capped output, valid UTF-8, and how the command ended. Cancel (ctx.cancelled) kills the process
// group (with bwrap, its
// --die-with-parent takes the sandbox along); so does the end of the command, for what it left
// running with `&`. A long-lived command (a dev server) runs with `background: true` instead:
// a job of the session (background_jobs.h), read and killed with `bash_job`, ended with the
// session. Confinement and approval are the same either way.
#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/sandbox/confined_command.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/bash_request.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/subprocess.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

constexpr int64_t kMaxTimeoutS = 3600;

std::string Ending(const SubprocessResult& r, int64_t timeout_s) {
  if (r.timed_out) {
    return absl::StrCat("[timed out after ", timeout_s, " s; the command was killed]");
  }
  if (r.cancelled) return "[cancelled by the user; the command was killed]";
  if (r.exited) return absl::StrCat("[exit code ", r.exit_code, "]");
  if (r.term_signal != 0) return absl::StrCat("[killed by signal ", r.term_signal, "]");
  return "[exit status unknown]";
}

// Wraps `options` in the sandbox (sandbox/confined_command.h); the connections its proxy is
// asked for are shown to the people attached as they come (`show_network`: not for a
// background job, which outlives the call's output stream). Returns what to do once the
// command ended.
absl::StatusOr<std::function<std::string()>> Confine(ToolContext& ctx, bool show_network,
                                                     SubprocessOptions* options) {
  std::function<void(const sandbox::ProxyEvent&)> show;
  if (show_network && ctx.on_output) {
    show = [out = ctx.on_output](const sandbox::ProxyEvent& e) {
      out(sandbox::ProxyEventLine(e), /*is_stderr=*/true);
    };
  }
  ASSIGN_OR_RETURN(
      sandbox::ConfinedCommand confined,
      sandbox::PrepareConfined(*ctx.sandbox, ctx.workdir, options->cwd, options->command,
                               /*network=*/false, std::move(show), ctx.read_only));
  options->argv = std::move(confined.argv);
  options->env = sandbox::SandboxEnvironment(options->env);
  return std::move(confined.after);
}

class BashTool : public DeclaredTool {
 public:
  BashTool()
      : DeclaredTool(
            "bash", /*gated=*/true,
            "Run a bash command in the project dir (no stdin); returns output and exit code. "
            "Sandboxed: writes only the project (not .git) and /tmp; no network or secrets.",
            {{"command", Property("string")},
             {"timeout_s", Property("integer", "seconds")},
             {"background", Property("boolean", "keep it running (a server): see bash_job")},
             {"escalate", Property("boolean", "run outside the sandbox (a person approves)")},
             {"justification", Property("string", "why, with escalate")}},
            {"command"}) {}

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    return Answer(RunInner(args, ctx));
  }

 private:
  absl::StatusOr<ToolOutcome> RunInner(const Json& args, ToolContext& ctx) const {
    ASSIGN_OR_RETURN(BashRequest request, ReadBashRequest(args));
    if (request.command.find_first_not_of(" \t\n") == std::string::npos) {
      return absl::InvalidArgumentError("bash: command is empty");
    }
    int64_t timeout_s = request.timeout_s.value_or(ctx.default_timeout_s);
    if (timeout_s <= 0) timeout_s = ctx.default_timeout_s > 0 ? ctx.default_timeout_s : 120;
    timeout_s = std::min(timeout_s, kMaxTimeoutS);

    SubprocessOptions options;
    options.command = std::move(request.command);
    options.cwd = ctx.cwd.empty() ? ctx.workdir : ctx.cwd;
    options.env = ctx.env;  // empty: the minimal environment, never the daemon's
    const bool confined = ctx.sandbox != nullptr && ctx.sandbox->Confines() && !request.escalate;
    if (ctx.read_only && !confined) {
      // The policy refuses this before it gets here; the tool does not rely on it.
      return absl::FailedPreconditionError(
          "bash: in plan mode commands run only inside the sandbox, with the project read-only");
    }
    std::function<std::string()> after = [] { return std::string(); };
    if (confined) {
      ASSIGN_OR_RETURN(after, Confine(ctx, !request.background, &options));
    }
    if (request.background) {
      if (ctx.jobs == nullptr) {
        return absl::FailedPreconditionError("bash: background jobs cannot run here");
      }
      const std::string shown = options.command;
      ASSIGN_OR_RETURN(int job, ctx.jobs->Start(std::move(options), shown, std::move(after)));
      return ToolOutcome{absl::StrCat("[started background job ", job,
                                      "; read its output with bash_job {\"job\": ", job,
                                      "}, end it with {\"job\": ", job,
                                      ", \"kill\": true}; the session's end ends it]"),
                         false};
    }
    options.timeout = std::chrono::seconds(timeout_s);
    options.cancelled = ctx.cancelled;
    options.on_output = ctx.on_output;
    ASSIGN_OR_RETURN(SubprocessResult r, RunSubprocess(options));
    const std::string after_note = after();

    std::string text = r.output.empty() ? "(no output)\n" : std::move(r.output);
    if (text.back() != '\n') text.push_back('\n');
    absl::StrAppend(&text, Ending(r, timeout_s));
    const bool failed = !(r.exited && r.exit_code == 0);
    // What the sandbox refused shows as the command's own errors; the model is told why.
    if (confined && failed && !r.cancelled && !r.timed_out &&
        sandbox::SandboxPlausiblyRefused(text, ctx.sandbox->policy(), ctx.workdir)) {
      absl::StrAppend(&text, "\n", sandbox::RefusalHint(ctx.sandbox->policy()));
    }
    if (!after_note.empty()) absl::StrAppend(&text, "\n", after_note);
    return ToolOutcome{std::move(text), failed};
  }
};

}  // namespace

std::unique_ptr<Tool> NewBashTool() { return std::make_unique<BashTool>(); }

}  // namespace agent::daemon::tools
