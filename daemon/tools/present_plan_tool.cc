#include "absl/strings/str_cat.h"
#include "daemon/tools/present_plan.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kMaxPlanChars = 20000;

class PresentPlanTool : public DeclaredTool {
 public:
  PresentPlanTool()
      : DeclaredTool(kPresentPlanTool, /*gated=*/false,
                     "Hand your finished plan (Markdown) to the user, who chooses how to go on. "
                     "Plan mode ends only this way.",
                     {{"plan", Property("string")}}, {"plan"}) {}
  bool Concurrent() const override { return false; }

  ToolOutcome Run(const Json& args, ToolContext& ctx) const override {
    const std::string plan = GetString(args, "plan");
    if (plan.find_first_not_of(" \t\n") == std::string::npos) {
      return ErrorOutcome(absl::InvalidArgumentError("present_plan: the plan is empty"));
    }
    if (plan.size() > kMaxPlanChars) {
      return ErrorOutcome(absl::InvalidArgumentError(
          absl::StrCat("present_plan: the plan is over ", kMaxPlanChars,
                       " characters; keep it to what the user must decide on")));
    }
    if (!ctx.present_plan) {
      return ErrorOutcome(absl::FailedPreconditionError(
          "present_plan: this session is not planning; go on with the work"));
    }
    return ctx.present_plan(plan);
  }
};

}  // namespace

std::unique_ptr<Tool> NewPresentPlanTool() { return std::make_unique<PresentPlanTool>(); }

}  // namespace agent::daemon::tools
