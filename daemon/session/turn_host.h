// TurnHost: what a Turn (turn.h) needs from the session it runs for. Everything the turn loop
// reads or changes of the session goes through here (append a message, emit an event, ask for
// an approval, save), so the loop is tested with a fake host: no gRPC server, no disk.
//
// The session implements it: each method takes the session's lock briefly and does no I/O
// under it (saves are queued and written once the lock is released: SessionSaver).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/model_types.h"
#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon {

// The calls' side of the host: what ToolDispatch (tool_dispatch.h) needs to run one reply's
// calls. A TurnHost is one, so the turn hands its own host to the dispatcher.
class ToolCallHost {
 public:
  virtual ~ToolCallHost() = default;

  // The call is about to be checked and run (the clients show it).
  virtual void CallReady(const llm::ToolCall& call) = 0;
  // For gated tools: nullopt to run the call, or the outcome that answers it instead (a rule, a
  // mode, or a person's answer, which the session waits for).
  virtual std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call,
                                                      const Json& args) = 0;
  virtual tools::ToolContext MakeToolContext(const std::string& call_id) = 0;
  // Every call once its arguments were checked against `tool`'s schema (tools/tool_input.h),
  // gated or not (the session's hooks run here): the outcome that answers it instead, else
  // nullopt; may change `args`, which are then checked again. Default: Authorize for gated tools.
  virtual std::optional<tools::ToolOutcome> BeforeTool(const llm::ToolCall& call,
                                                       const tools::Tool& tool, Json* args) {
    return tool.Gated() ? Authorize(call, *args) : std::nullopt;
  }
  // A call that ran: may add to its result (PostToolUse hooks). Called from batch threads.
  virtual void AfterTool(const llm::ToolCall& /*call*/, const Json& /*args*/,
                         tools::ToolOutcome* /*outcome*/) {}
  // Appends the outcomes of calls[first], calls[first + 1], … in call order, and saves them once.
  virtual void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                             const std::vector<tools::ToolOutcome>& outcomes) = 0;
};

class TurnHost : public ToolCallHost {
 public:
  // ---- The transcript ----
  // At the start of each step, nothing pending: the prompts steered into the turn since the
  // last step become user messages (a person's course correction reaches the next request).
  virtual void LandSteers() {}
  // The request for the next step: the transcript in wire form and the offer of `tools` (the
  // step's). An error when the transcript cannot be sent (the rule is broken: an internal error).
  virtual absl::StatusOr<llm::ModelRequest> NextRequest(const tools::ToolRegistry& tools) = 0;
  // Where the model's reply streams to (text and reasoning the clients see as it comes).
  virtual llm::StreamSink* Stream() = 0;
  // A request failed: the text the clients already saw stays in the transcript, so the model
  // knows it said it.
  virtual void KeepStreamedText() = 0;
  // Appends the model's reply, saves it, tells the clients. An error for a malformed reply.
  virtual absl::Status AppendReply(const llm::ModelReply& reply) = 0;

  // ---- Compaction ----
  virtual bool ShouldCompact() = 0;
  // Replaces the older messages by a summary; an error leaves the transcript as it was.
  virtual absl::Status CompactTranscript() = 0;

  // ---- Tools ----
  // The tools of this step (MCP servers come and go); the same set answers the step's calls.
  virtual std::shared_ptr<const tools::ToolRegistry> StepTools() = 0;
};

}  // namespace agent::daemon
