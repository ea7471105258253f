// ToolDispatch: runs the tool calls of one model reply. Consecutive concurrent calls (read-only
// tools, and MCP tools annotated readOnlyHint) run concurrently, at most kMaxParallelCalls at a
// time (a reply is model output: it may hold thousands of calls), once each gated one of them
// had the host's verdict (asked one call at a time, in call order);
// any other gated (or a truncated) call runs alone, after the host's verdict. Results are handed
// back in call order, batch by batch, whatever order the calls finish in. Tools are found by name
// in the registry: tools of other sources (MCP servers, the `task` tool) plug in by being
// registered there.
//
// Thread-safety: Run is called from the turn thread, and so are the host's OnCallReady,
// BeforeTool and Authorize; MakeContext and AfterTool may be called from the batch's threads at
// the same time.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon {

class ToolDispatch {
 public:
  // What the dispatcher needs from the session it runs for.
  class Host {
   public:
    virtual ~Host() = default;
    // The call is about to be checked and run (the clients show it).
    virtual void OnCallReady(const llm::ToolCall& call) = 0;
    // For gated tools: nullopt to run the call, or the outcome that answers it instead.
    virtual std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call,
                                                        const Json& args) = 0;
    virtual tools::ToolContext MakeContext(const std::string& call_id) = 0;
    // Every call once its arguments were checked against `tool`'s schema (tools/tool_input.h):
    // the outcome that answers it instead, else nullopt to run it; may change `args` (hooks,
    // daemon/hooks/), which it then checks again. Default: Authorize for gated tools.
    virtual std::optional<tools::ToolOutcome> BeforeTool(const llm::ToolCall& call,
                                                         const tools::Tool& tool, Json* args) {
      return tool.Gated() ? Authorize(call, *args) : std::nullopt;
    }
    // A call that ran: may add to what the model is told (hooks). Called from batch threads.
    virtual void AfterTool(const llm::ToolCall& /*call*/, const Json& /*args*/,
                           tools::ToolOutcome* /*outcome*/) {}
    // The outcomes of calls[first], calls[first + 1], … in call order.
    virtual void OnResults(const std::vector<llm::ToolCall>& calls, size_t first,
                           const std::vector<tools::ToolOutcome>& outcomes) = 0;
  };

  // Threads of one batch; also bounds the `task` calls waiting for a subagent slot at once
  // (kMaxSubagentConcurrent is no higher).
  static constexpr size_t kMaxParallelCalls = 16;

  ToolDispatch(const tools::ToolRegistry* tools, Host* host, const std::atomic<bool>* cancelled)
      : tools_(tools), host_(host), cancelled_(cancelled) {}

  // Runs `calls` until they are all answered or a cancel stops it between batches (the
  // unanswered rest is the caller's to seal). `last_truncated`: the reply was cut at the
  // output limit, so the last call's arguments may be incomplete and it is not run.
  void Run(const std::vector<llm::ToolCall>& calls, bool last_truncated);

 private:
  // End (exclusive) of the batch that starts at `i`.
  size_t BatchEnd(const std::vector<llm::ToolCall>& calls, size_t i, bool last_truncated) const;
  // A call ready to run, or the outcome that answers it without running.
  struct Prepared {
    const tools::Tool* tool = nullptr;
    Json args;
    std::optional<tools::ToolOutcome> outcome;
  };
  Prepared Prepare(const llm::ToolCall& call, bool truncated);
  tools::ToolOutcome Execute(const llm::ToolCall& call, const Prepared& p);
  tools::ToolOutcome UnknownTool(const std::string& name) const;

  const tools::ToolRegistry* tools_;
  Host* host_;
  const std::atomic<bool>* cancelled_;
};

}  // namespace agent::daemon
