#include "daemon/tool_dispatch.h"

#include <future>

#include "absl/strings/str_cat.h"
#include "daemon/tools/tool_args.h"

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
    std::vector<tools::ToolOutcome> outcomes;
    if (j - i > 1) {
      std::vector<std::future<tools::ToolOutcome>> futures;
      for (size_t k = i; k < j; ++k) {
        futures.push_back(
            std::async(std::launch::async, [this, &calls, k] { return RunOne(calls[k], false); }));
      }
      for (auto& f : futures) outcomes.push_back(f.get());
    } else {
      outcomes.push_back(RunOne(calls[i], last_truncated && i + 1 == calls.size()));
    }
    host_->OnResults(calls, i, outcomes);
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

tools::ToolOutcome ToolDispatch::RunOne(const llm::ToolCall& call, bool truncated) {
  host_->OnCallReady(call);
  if (*cancelled_) return {"Not run: cancelled by the user.", true};
  if (truncated) {
    return {
        "Not run: your reply was cut at the output limit, so these arguments may be "
        "incomplete. Send the call again, shorter if needed.",
        true};
  }
  const tools::Tool* tool = tools_->Find(call.name);
  if (tool == nullptr) return UnknownTool(call.name);
  absl::StatusOr<Json> args = tools::ParseToolArguments(call.arguments);
  if (!args.ok()) return {std::string(args.status().message()), true};
  if (tool->Gated()) {
    if (auto refused = host_->Authorize(call, *args); refused.has_value()) return *refused;
  }
  tools::ToolContext ctx = host_->MakeContext(call.id);
  return tool->Run(*args, ctx);
}

}  // namespace agent::daemon
