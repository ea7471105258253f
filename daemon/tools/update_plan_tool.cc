#include "absl/strings/str_cat.h"
#include "daemon/tools/tool_helpers.h"
#include "daemon/tools/update_plan.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kMaxSteps = 30;
constexpr size_t kMaxStepChars = 400;
constexpr size_t kMaxExplanationChars = 1000;

std::string Clip(std::string s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + "…";
}

// The plan's steps, each with its status.
Json UpdatePlanSchema() {
  Json step = {{"type", "object"},
               {"properties",
                {{"step", Property("string")},
                 {"status", {{"type", "string"}, {"enum", {"pending", "in_progress", "done"}}}}}},
               {"required", {"step", "status"}},
               {"additionalProperties", false}};
  return FunctionSchema(
      kUpdatePlanTool, "Show the user your plan: all steps each time, one in_progress.",
      {{"plan", {{"type", "array"}, {"items", step}}}, {"explanation", Property("string")}},
      {"plan"});
}

class UpdatePlanTool : public DeclaredTool {
 public:
  UpdatePlanTool() : DeclaredTool(kUpdatePlanTool, /*gated=*/false, UpdatePlanSchema()) {}

  ToolOutcome Run(const Json& args, ToolContext&) const override {
    absl::StatusOr<Json> plan = NormalizePlan(args);
    if (!plan.ok()) return ErrorOutcome(plan.status());
    return TextOutcome("Plan updated.");
  }
};

}  // namespace

std::unique_ptr<Tool> NewUpdatePlanTool() { return std::make_unique<UpdatePlanTool>(); }

absl::StatusOr<Json> NormalizePlan(const Json& args) {
  if (!args.is_object())
    return absl::InvalidArgumentError("update_plan: arguments must be an object");
  auto plan = args.find("plan");
  if (plan == args.end() || !plan->is_array()) {
    return absl::InvalidArgumentError("update_plan: \"plan\" must be a list of {step, status}");
  }
  if (plan->size() > kMaxSteps) {
    return absl::InvalidArgumentError(
        absl::StrCat("update_plan: at most ", kMaxSteps, " steps; keep the plan short"));
  }
  Json out = {{"explanation", Clip(GetString(args, "explanation"), kMaxExplanationChars)},
              {"plan", Json::array()}};
  int in_progress = 0;
  for (const Json& s : *plan) {
    std::string text = s.is_object() ? GetString(s, "step") : "";
    std::string status = s.is_object() ? GetString(s, "status") : "";
    if (text.empty())
      return absl::InvalidArgumentError("update_plan: every step needs a \"step\" text");
    if (status == "completed") status = "done";
    if (status != "pending" && status != "in_progress" && status != "done") {
      return absl::InvalidArgumentError(absl::StrCat(
          "update_plan: status must be pending, in_progress or done, not \"", status, "\""));
    }
    in_progress += status == "in_progress";
    out["plan"].push_back({{"step", Clip(text, kMaxStepChars)}, {"status", status}});
  }
  if (in_progress > 1) {
    return absl::InvalidArgumentError("update_plan: at most one step may be in_progress");
  }
  return out;
}

}  // namespace agent::daemon::tools
