#include "daemon/context/session_context.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace agent::daemon::context {
namespace {

namespace v1 = agent::v1;

std::string Size(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024);
}

v1::PlanStepStatus StatusFrom(const std::string& s) {
  if (s == "in_progress") return v1::PLAN_STEP_STATUS_IN_PROGRESS;
  if (s == "done") return v1::PLAN_STEP_STATUS_DONE;
  return v1::PLAN_STEP_STATUS_PENDING;
}

const char* StatusName(v1::PlanStepStatus s) {
  if (s == v1::PLAN_STEP_STATUS_IN_PROGRESS) return "in_progress";
  if (s == v1::PLAN_STEP_STATUS_DONE) return "done";
  return "pending";
}

}  // namespace

void SessionContext::SetPrompt(const Instructions& in, size_t base, size_t total) {
  instructions.clear();
  for (const Instruction& f : in.files) {
    v1::InstructionFile p;
    p.set_path(f.path);
    p.set_bytes(f.bytes);
    p.set_truncated(f.truncated);
    instructions.push_back(std::move(p));
  }
  base_chars = static_cast<int64_t>(base);
  instruction_chars = static_cast<int64_t>(total - base);
}

Json SessionContext::ToJson() const {
  Json files = Json::array();
  for (const v1::InstructionFile& f : instructions) {
    files.push_back({{"path", f.path()}, {"bytes", f.bytes()}, {"truncated", f.truncated()}});
  }
  Json j = {{"usage", usage.ToJson()},
            {"instructions", files},
            {"base_chars", base_chars},
            {"instruction_chars", instruction_chars}};
  if (plan.has_value()) {
    Json steps = Json::array();
    for (const v1::PlanStep& s : plan->steps()) {
      steps.push_back({{"step", s.text()}, {"status", StatusName(s.status())}});
    }
    j["plan"] = {{"explanation", plan->explanation()}, {"plan", steps}};
  }
  return j;
}

void SessionContext::LoadJson(const Json& j) {
  if (!j.is_object()) return;
  usage.LoadJson(j.value("usage", Json::object()));
  instructions.clear();
  for (const Json& f : j.value("instructions", Json::array())) {
    if (!f.is_object()) continue;
    v1::InstructionFile p;
    p.set_path(GetString(f, "path"));
    p.set_bytes(GetInt(f, "bytes"));
    p.set_truncated(GetBool(f, "truncated"));
    instructions.push_back(std::move(p));
  }
  base_chars = GetInt(j, "base_chars");
  instruction_chars = GetInt(j, "instruction_chars");
  if (auto it = j.find("plan"); it != j.end() && it->is_object()) plan = PlanFromJson(*it);
}

v1::Plan PlanFromJson(const Json& j) {
  v1::Plan plan;
  plan.set_explanation(GetString(j, "explanation"));
  for (const Json& s : j.value("plan", Json::array())) {
    if (!s.is_object()) continue;
    v1::PlanStep* step = plan.add_steps();
    step->set_text(GetString(s, "step"));
    step->set_status(StatusFrom(GetString(s, "status")));
  }
  return plan;
}

std::string InstructionsNotice(const Instructions& in) {
  if (in.files.empty()) return "";
  std::string out = "instructions in effect (repository content the model follows): ";
  for (size_t i = 0; i < in.files.size(); ++i) {
    const Instruction& f = in.files[i];
    absl::StrAppend(&out, i ? ", " : "", f.path, " (", Size(f.bytes), f.truncated ? ", cut" : "",
                    ")");
  }
  if (!in.cut_note.empty()) absl::StrAppend(&out, "\n", in.cut_note);
  return out;
}

v1::Usage UsageFromContextJson(const Json& context) {
  UsageMeter m;
  if (context.is_object()) m.LoadJson(context.value("usage", Json::object()));
  return m.session();
}

}  // namespace agent::daemon::context
