#include "daemon/subagents/task_result.h"

#include "absl/strings/str_cat.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::subagents {
namespace {

namespace v1 = agent::v1;

std::string Capped(const std::string& answer, size_t cap, const std::string& child_id) {
  if (answer.size() <= cap) return answer;
  std::string_view head = tools::Utf8Prefix(answer, cap);
  if (size_t nl = head.rfind('\n'); nl != std::string_view::npos && nl > cap / 2) {
    head = head.substr(0, nl + 1);
  }
  return absl::StrCat(tools::AbslView(head), "\n[answer cut at ", head.size(), " of ",
                      answer.size(), " bytes; the whole answer is the last message of session ",
                      child_id, ": agent attach ", child_id, "]");
}

}  // namespace

tools::ToolOutcome FormatTaskResult(const ChildEnd& end, size_t cap) {
  const std::string where =
      absl::StrCat("[subagent session ", end.child_id, ", agent ", end.agent, "]");
  std::string answer = Capped(end.answer, cap, end.child_id);
  switch (end.outcome) {
    case v1::TURN_OUTCOME_DONE:
      if (answer.empty()) answer = "(the subagent finished without a text answer)";
      return {absl::StrCat(answer, "\n\n", where), false};
    case v1::TURN_OUTCOME_CANCELLED:
      return {absl::StrCat("Cancelled: the subagent was stopped before it finished. ", where,
                           answer.empty() ? "" : "\nWhat it wrote so far:\n", answer),
              true};
    case v1::TURN_OUTCOME_MAX_STEPS:
      return {absl::StrCat("The subagent hit its step limit before finishing. ", where,
                           answer.empty() ? "" : "\nIts last text:\n", answer),
              true};
    default:
      return {absl::StrCat("The subagent failed: ", end.error.empty() ? "unknown error" : end.error,
                           " ", where, answer.empty() ? "" : "\nIts last text:\n", answer),
              true};
  }
}

}  // namespace agent::daemon::subagents
