#include "daemon/session/tool_dispatch.h"

#include <algorithm>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_input.h"

namespace agent::daemon {

size_t ToolDispatch::BatchEnd(const std::vector<llm::ToolCall>& calls, size_t i,
                              bool last_truncated) const {
  size_t j = i;
  while (j < calls.size() && tools_->IsReadOnly(calls[j].name) &&
         !(last_truncated && j + 1 == calls.size())) {
    ++j;
  }
  return j == i ? i + 1 : j;  // a gated (or truncated) call is a batch of its own
}

void ToolDispatch::Run(const std::vector<llm::ToolCall>& calls, bool last_truncated) {
  size_t i = 0;
  while (i < calls.size()) {
    const size_t j = BatchEnd(calls, i, last_truncated);
    std::vector<Prepared> prepared;
    for (size_t k = i; k < j; ++k) {
      prepared.push_back(Prepare(calls[k], last_truncated && k + 1 == calls.size()));
    }
    std::vector<tools::ToolOutcome> outcomes;
    if (j - i > 1) {
      outcomes.resize(j - i);
      std::atomic<size_t> next{i};
      auto work = [this, &calls, &prepared, &outcomes, &next, i, j] {
        for (size_t k = next++; k < j; k = next++)
          outcomes[k - i] = Execute(calls[k], prepared[k - i]);
      };
      std::vector<std::thread> threads;
      for (size_t t = 1; t < std::min(j - i, kMaxParallelCalls); ++t) {
        try {
          threads.emplace_back(work);
        } catch (const std::system_error&) {
          break;  // out of threads (a process limit): the calls left run on fewer
        }
      }
      work();  // this thread takes its share too, so a batch runs even when none could start
      for (std::thread& t : threads) t.join();
    } else {
      outcomes.push_back(Execute(calls[i], prepared[0]));
    }
    host_->AppendResults(calls, i, outcomes);
    i = j;
    if (*cancelled_) return;
  }
}

tools::ToolOutcome ToolDispatch::UnknownTool(const std::string& name) const {
  std::string names;
  for (std::string_view n : tools_->Names()) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", std::string(n));
  }
  return {absl::StrCat("Unknown tool \"", name, "\". Available: ", names, "."), true};
}

ToolDispatch::Prepared ToolDispatch::Prepare(const llm::ToolCall& call, bool truncated) {
  Prepared p;
  host_->CallReady(call);
  if (*cancelled_) {
    p.outcome = tools::ToolOutcome{"Not run: cancelled by the user.", true};
    return p;
  }
  if (truncated) {
    p.outcome = tools::ToolOutcome{
        "Not run: your reply was cut at the output limit, so these arguments may be "
        "incomplete. Send the call again, shorter if needed.",
        true};
    return p;
  }
  p.tool = tools_->Find(call.name);
  if (p.tool == nullptr) {
    p.outcome = UnknownTool(call.name);
    return p;
  }
  // The one reading of the arguments that the policy, the hooks, the question and the tool share.
  absl::StatusOr<Json> args = tools::ParseToolArguments(call.arguments);
  if (args.ok()) args = tools::CheckToolInput(*p.tool, *std::move(args));
  if (!args.ok()) {
    p.outcome = tools::ToolOutcome{std::string(args.status().message()), true};
    return p;
  }
  p.args = std::move(*args);
  p.outcome = host_->BeforeTool(call, *p.tool, &p.args);
  return p;
}

tools::ToolOutcome ToolDispatch::Execute(const llm::ToolCall& call, const Prepared& p) {
  if (p.outcome.has_value()) return *p.outcome;
  // A cancel while an earlier call of the batch was being approved stops the rest.
  if (*cancelled_) return {"Not run: cancelled by the user.", true};
  tools::ToolContext ctx = host_->MakeToolContext(call.id);
  tools::ToolOutcome outcome = p.tool->Run(p.args, ctx);
  host_->AfterTool(call, p.args, &outcome);
  return outcome;
}

}  // namespace agent::daemon
