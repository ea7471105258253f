#include "daemon/context/context_report.h"

#include <algorithm>

namespace agent::daemon::context {
namespace {

int64_t Chars(const Json& j) { return static_cast<int64_t>(DumpJson(j).size()); }

}  // namespace

agent::v1::ContextReport BuildContextReport(const SessionContext& ctx, const Json& messages,
                                            const Json& tools, int64_t context_window) {
  agent::v1::ContextReport r;
  int64_t system_chars = ctx.base_chars;
  int64_t instruction_chars = ctx.instruction_chars;
  size_t first = 0;
  if (!messages.empty() && GetString(messages[0], "role") == "system") {
    first = 1;
    // A session saved before sizes were kept: all of it counts as the system prompt.
    if (system_chars + instruction_chars == 0) {
      system_chars = static_cast<int64_t>(GetString(messages[0], "content").size());
    }
  }
  r.set_system_tokens(EstimateTokens(system_chars));
  r.set_instruction_tokens(EstimateTokens(instruction_chars));
  r.set_tool_tokens(EstimateTokens(Chars(tools)));
  int64_t message_chars = 0;
  for (size_t i = first; i < messages.size(); ++i) message_chars += Chars(messages[i]);
  r.set_message_tokens(EstimateTokens(message_chars));
  r.set_estimated(true);
  const int64_t fixed = r.system_tokens() + r.instruction_tokens() + r.tool_tokens();
  if (ctx.reported_tokens > 0 && ctx.reported_messages <= messages.size()) {
    // The provider's count of everything up to its last reply, plus an estimate of what
    // came after (tool results).
    int64_t later = 0;
    for (size_t i = ctx.reported_messages; i < messages.size(); ++i) later += Chars(messages[i]);
    const int64_t total = ctx.reported_tokens + EstimateTokens(later);
    r.set_message_tokens(std::max<int64_t>(0, total - fixed));
    r.set_estimated(false);
  }
  r.set_total_tokens(fixed + r.message_tokens());
  r.set_context_tokens(context_window);
  return r;
}

}  // namespace agent::daemon::context
