// bash_job {job?, kill?}: the session's background jobs (bash with background: true). Without
// `job`, lists them; with it, the job's output since the last read and its state; with
// `kill: true`, ends it first. Not gated: it reads or ends only what the session itself
// started, which was approved (or confined) when it started.
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/tools/background_jobs.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

class BashJobTool : public DeclaredTool {
 public:
  BashJobTool()
      : DeclaredTool("bash_job", /*gated=*/false,
                     "List bash's background jobs, or read one's new output, or kill it.",
                     {{"job", Property("integer")}, {"kill", Property("boolean")}}, {}) {}

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    return Answer(RunInner(args, ctx));
  }

 private:
  absl::StatusOr<ToolOutcome> RunInner(const Json& args, ToolContext& ctx) const {
    if (ctx.jobs == nullptr) return absl::FailedPreconditionError("bash_job: no jobs here");
    ASSIGN_OR_RETURN(std::optional<int64_t> job, OptionalInt(args, "job", Name()));
    ASSIGN_OR_RETURN(std::optional<bool> kill, OptionalBool(args, "kill", Name()));
    if (!job.has_value()) {
      std::string list = ctx.jobs->List();
      return TextOutcome(list.empty() ? "no background jobs" : list);
    }
    if (*job <= 0 || *job > 1'000'000) {
      return absl::InvalidArgumentError(absl::StrCat("bash_job: no background job ", *job));
    }
    const int id = static_cast<int>(*job);
    ASSIGN_OR_RETURN(std::string report,
                     kill.value_or(false) ? ctx.jobs->Kill(id) : ctx.jobs->Read(id));
    return TextOutcome(std::move(report));
  }
};

}  // namespace

std::unique_ptr<Tool> NewBashJobTool() { return std::make_unique<BashJobTool>(); }

}  // namespace agent::daemon::tools
