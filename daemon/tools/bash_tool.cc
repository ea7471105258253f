// bash {command, timeout_s?, background?, escalate?, justification?}: runs the command with
// /bin/bash -c in the project directory (see subprocess.h) with the environment ctx.env, inside
// the sandbox (daemon/sandbox/) whenever it confines; `escalate: true` runs it outside, which
// the policy lets happen only with a person's answer (daemon/escalation.h). Output streams to
// ctx.on_output while it runs; the result holds the capped output, valid UTF-8, and how the
// command ended. Cancel (ctx.cancelled) kills the process group (with bwrap, its
// --die-with-parent takes the sandbox along); so does the end of the command, for what it left
// running with `&`. A long-lived command (a dev server) runs with `background: true` instead:
// a job of the session (background_jobs.h), read and killed with `bash_job`, ended with the
// session. Confinement and approval are the same either way.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/sandbox/sandbox.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/subprocess.h"
#include "daemon/tools/tool_args.h"
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

class BashTool : public Tool {
 public:
  std::string_view Name() const override { return "bash"; }
  bool Gated() const override { return true; }

  Json Schema() const override {
    return FunctionSchema(
        Name(),
        "Run a bash command in the project dir (no stdin); returns output and exit code. "
        "Sandboxed: writes only in the project and /tmp, no network, no secrets.",
        {{"command", Property("string")},
         {"timeout_s", Property("integer", "seconds")},
         {"background", Property("boolean", "keep it running (a server): see bash_job")},
         {"escalate", Property("boolean", "run outside the sandbox (a person approves)")},
         {"justification", Property("string", "why, with escalate")}},
        {"command"});
  }

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    absl::StatusOr<ToolOutcome> out = RunInner(args, ctx);
    if (!out.ok()) return ErrorOutcome(out.status());
    return *std::move(out);
  }

 private:
  absl::StatusOr<ToolOutcome> RunInner(const Json& args, ToolContext& ctx) const {
    ASSIGN_OR_RETURN(std::string command, RequireString(args, "command", Name()));
    ASSIGN_OR_RETURN(std::optional<int64_t> timeout_arg, OptionalInt(args, "timeout_s", Name()));
    if (command.find_first_not_of(" \t\n") == std::string::npos) {
      return absl::InvalidArgumentError("bash: command is empty");
    }
    int64_t timeout_s = timeout_arg.value_or(ctx.default_timeout_s);
    if (timeout_s <= 0) timeout_s = ctx.default_timeout_s > 0 ? ctx.default_timeout_s : 120;
    timeout_s = std::min(timeout_s, kMaxTimeoutS);

    ASSIGN_OR_RETURN(std::optional<bool> escalate, OptionalBool(args, "escalate", Name()));
    ASSIGN_OR_RETURN(std::optional<bool> background, OptionalBool(args, "background", Name()));
    SubprocessOptions options;
    options.command = std::move(command);
    options.cwd = ctx.cwd.empty() ? ctx.workdir : ctx.cwd;
    options.env = ctx.env;  // empty: the minimal environment, never the daemon's
    const bool confined =
        ctx.sandbox != nullptr && ctx.sandbox->Confines() && !escalate.value_or(false);
    if (confined) {
      options.argv = ctx.sandbox->Wrap({ctx.workdir, options.cwd}, options.command, false);
      options.env = sandbox::SandboxEnvironment(options.env);
    }
    if (background.value_or(false)) {
      if (ctx.jobs == nullptr) {
        return absl::FailedPreconditionError("bash: background jobs cannot run here");
      }
      const std::string shown = options.command;
      ASSIGN_OR_RETURN(int job, ctx.jobs->Start(std::move(options), shown));
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

    std::string text = r.output.empty() ? "(no output)\n" : std::move(r.output);
    if (text.back() != '\n') text.push_back('\n');
    absl::StrAppend(&text, Ending(r, timeout_s));
    const bool failed = !(r.exited && r.exit_code == 0);
    // What the sandbox refused shows as the command's own errors; the model is told why.
    if (confined && failed && !r.cancelled && !r.timed_out) {
      absl::StrAppend(&text, "\n", sandbox::RefusalHint(ctx.sandbox->policy()));
    }
    return ToolOutcome{std::move(text), failed};
  }
};

}  // namespace

std::unique_ptr<Tool> NewBashTool() { return std::make_unique<BashTool>(); }

}  // namespace agent::daemon::tools
