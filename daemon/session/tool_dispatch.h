// ToolDispatch: runs the tool calls of one model reply. Consecutive concurrent calls (read-only
// tools, and MCP tools annotated readOnlyHint) run concurrently, at most kMaxParallelCalls at a
// time (a reply is model output: it may hold thousands of calls), once each gated one of them
// had the host's verdict (asked one call at a time, in call order);
// any other gated (or a truncated) call runs alone, after the host's verdict. Results are handed
// back in call order, batch by batch, whatever order the calls finish in. Tools are found by name
// in the registry: tools of other sources (MCP servers, the `task` tool) plug in by being
// registered there.
//
// The host is the turn's (turn_host.h ToolCallHost).
//
// Thread-safety: Run is called from the turn thread, and so are the host's CallReady,
// BeforeTool and Authorize; MakeToolContext and AfterTool may be called from the batch's threads
// at the same time.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/session/turn_host.h"
#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon {

class ToolDispatch {
 public:
  // Threads of one batch; also bounds the `task` calls waiting for a subagent slot at once
  // (kMaxSubagentConcurrent is no higher).
  static constexpr size_t kMaxParallelCalls = 16;

  ToolDispatch(const tools::ToolRegistry* tools, ToolCallHost* host,
               const std::atomic<bool>* cancelled)
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
  ToolCallHost* host_;
  const std::atomic<bool>* cancelled_;
};

}  // namespace agent::daemon
