#include "client/view/answer_filter.h"

namespace agent::client {

namespace v1 = agent::v1;

std::string AnswerFilter::Take() {
  std::string out = std::move(held_);
  held_.clear();
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

AnswerFilter::Out AnswerFilter::OnEvent(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kTextDelta:
      held_ += e.text_delta().text();
      return {};
    case v1::Event::kToolCallStarted:  // this reply calls a tool: its text is narration
      return {"", Take()};
    case v1::Event::kAssistantMessage:
      if (e.assistant_message().tool_calls_size() > 0) return {"", Take()};
      return {Take(), ""};
    case v1::Event::kRetrying:  // the attempt's text is discarded with it
      held_.clear();
      return {};
    case v1::Event::kTurnEnded:  // cancelled or failed mid-reply: what came is the answer
      return {Take(), ""};
    default:
      return {};
  }
}

}  // namespace agent::client
