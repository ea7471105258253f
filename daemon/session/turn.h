// Turn: the loop that answers one prompt: model request → tool calls → model request … until
// the model stops calling tools, the step limit is hit, a cancel arrives or a request fails.
// It owns no session state: it talks to its session through TurnHost, and runs on the
// session's turn thread.
//
// A reply is model output and may hold thousands of calls: the first kMaxCallsPerReply run,
// the rest are answered with a result that says so (the rule holds, and the model can call
// again for them).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"
#include "daemon/llm/model_client.h"
#include "daemon/session/tool_dispatch.h"
#include "daemon/session/turn_host.h"

namespace agent::daemon {

class Turn final {
 public:
  static constexpr size_t kMaxCallsPerReply = 256;

  // `model` and `cancelled` outlive the Turn; `max_steps`: model requests at most.
  Turn(TurnHost* host, llm::ModelClient* model, const std::atomic<bool>* cancelled, int max_steps,
       size_t max_calls_per_reply = kMaxCallsPerReply);

  // How the turn ended; `error` says why for TURN_OUTCOME_ERROR. Calls a cancel left unanswered
  // are the session's to seal.
  agent::v1::TurnOutcome Run(std::string* error);

 private:
  // One model request and the calls it made; an outcome when the turn ends with it.
  std::optional<agent::v1::TurnOutcome> Step(std::string* error);
  void RunCalls(const tools::ToolRegistry* tools, const llm::ModelReply& reply);

  TurnHost* const host_;
  llm::ModelClient* const model_;
  const std::atomic<bool>* const cancelled_;
  const int max_steps_;
  const size_t max_calls_;
};

}  // namespace agent::daemon
