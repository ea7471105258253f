#include "client/text/plan_view.h"

#include "absl/strings/str_cat.h"
#include "client/terminal/terminal_text.h"

namespace agent::client {
namespace {

std::string SafeText(const std::string& s) {
  std::string out = StripAnsi(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

}  // namespace

std::string PlanText(const agent::v1::Plan& plan) {
  if (plan.steps().empty()) return "";
  // The model wrote these: no escape sequence of theirs reaches the terminal.
  std::string out = "plan";
  if (!plan.explanation().empty()) absl::StrAppend(&out, ": ", SafeText(plan.explanation()));
  out += "\n";
  for (const agent::v1::PlanStep& s : plan.steps()) {
    const char* mark = s.status() == agent::v1::PLAN_STEP_STATUS_DONE          ? "[x]"
                       : s.status() == agent::v1::PLAN_STEP_STATUS_IN_PROGRESS ? "[>]"
                                                                               : "[ ]";
    absl::StrAppend(&out, "  ", mark, " ", SafeText(s.text()), "\n");
  }
  return out;
}

}  // namespace agent::client
