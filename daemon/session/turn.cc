#include "daemon/session/turn.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

}  // namespace

Turn::Turn(TurnHost* host, llm::ModelClient* model, const std::atomic<bool>* cancelled,
           int max_steps, size_t max_calls_per_reply)
    : host_(host),
      model_(model),
      cancelled_(cancelled),
      max_steps_(max_steps),
      max_calls_(std::max<size_t>(1, max_calls_per_reply)) {}

v1::TurnOutcome Turn::Run(std::string* error) {
  for (int step = 0; step < max_steps_; ++step) {
    if (*cancelled_) return v1::TURN_OUTCOME_CANCELLED;
    if (std::optional<v1::TurnOutcome> end = Step(error); end.has_value()) return *end;
    if (*cancelled_) return v1::TURN_OUTCOME_CANCELLED;
  }
  return v1::TURN_OUTCOME_MAX_STEPS;
}

std::optional<v1::TurnOutcome> Turn::Step(std::string* error) {
  // The last step's results are all in: a user message here keeps the transcript's rule.
  host_->LandSteers();
  // A failed summary leaves the transcript as it was; the request below may still fit.
  if (host_->ShouldCompact()) (void)host_->CompactTranscript();
  const std::shared_ptr<const tools::ToolRegistry> tools = host_->StepTools();
  absl::StatusOr<llm::ModelRequest> request = host_->NextRequest(*tools);
  if (!request.ok()) {
    *error = std::string(request.status().message());
    return v1::TURN_OUTCOME_ERROR;
  }
  absl::StatusOr<llm::ModelReply> reply = model_->Complete(*request, host_->Stream(), cancelled_);
  if (!reply.ok()) {
    host_->KeepStreamedText();
    if (*cancelled_ || absl::IsCancelled(reply.status())) return v1::TURN_OUTCOME_CANCELLED;
    *error = std::string(reply.status().message());
    return v1::TURN_OUTCOME_ERROR;
  }
  if (absl::Status s = host_->AppendReply(*reply); !s.ok()) {
    *error = std::string(s.message());
    return v1::TURN_OUTCOME_ERROR;
  }
  if (reply->tool_calls.empty()) {
    if (reply->finish_reason != "length") return v1::TURN_OUTCOME_DONE;
    *error = "the model stopped at its output limit";
    return v1::TURN_OUTCOME_ERROR;
  }
  RunCalls(tools.get(), *reply);
  return std::nullopt;
}

void Turn::RunCalls(const tools::ToolRegistry* tools, const llm::ModelReply& reply) {
  const std::vector<llm::ToolCall>& calls = reply.tool_calls;
  if (calls.size() <= max_calls_) {
    ToolDispatch(tools, host_, cancelled_).Run(calls, reply.LastCallTruncated());
    return;
  }
  const std::vector<llm::ToolCall> run(calls.begin(),
                                       calls.begin() + static_cast<std::ptrdiff_t>(max_calls_));
  ToolDispatch(tools, host_, cancelled_).Run(run, /*last_truncated=*/false);
  if (*cancelled_) return;  // the session seals the rest
  const std::string why = absl::StrCat("not run: a reply may make at most ", max_calls_,
                                       " tool calls and this one made ", calls.size(),
                                       "; call again for what is still needed");
  std::vector<tools::ToolOutcome> not_run(calls.size() - max_calls_);
  for (tools::ToolOutcome& o : not_run) {
    o.content = why;
    o.is_error = true;
  }
  host_->AppendResults(calls, max_calls_, not_run);
}

}  // namespace agent::daemon
