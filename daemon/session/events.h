// The events a session emits, built from plain values. Pure functions; thread-safe. The
// session stamps seq, epoch and time when it appends them (EventLog::Append).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/v1/agent.pb.h"
#include "daemon/llm/model_types.h"

namespace agent::daemon::events {

agent::v1::Event TextDelta(std::string_view text);
agent::v1::Event ReasoningDelta(std::string_view text);
agent::v1::Event ToolCallStarted(std::string_view call_id, std::string_view name);
agent::v1::Event Retrying(int attempt, int max_attempts, int64_t delay_ms, std::string_view reason);
agent::v1::Event TurnStarted(const std::string& prompt);
agent::v1::Event UserMessage(const std::string& text, const std::string& client);
agent::v1::Event Steered(const std::string& text, const std::string& client,
                         agent::v1::Steered::Stage stage, const std::string& reason = "");
agent::v1::Event TurnEnded(agent::v1::TurnOutcome outcome, const std::string& error);

// What a turn gathers for its TurnEnded besides the outcome: who cancelled it (empty: the
// daemon or nobody), when it started, how many gated calls the mode or a rule refused.
struct TurnTally {
  std::string cancelled_by;
  int64_t started_ms = 0;
  int denied_calls = 0;
};
// Sets cancelled_by (for a cancelled turn only), duration_ms and denied_calls on a TurnEnded.
void AddTally(agent::v1::Event* turn_ended, const TurnTally& tally, int64_t now_ms);
agent::v1::Event Usage(int64_t prompt_tokens, int64_t completion_tokens);
// The assistant message as it entered the transcript: its text and its tool calls.
agent::v1::Event AssistantMessage(const llm::ModelReply& reply);
agent::v1::Event ToolCallReady(const llm::ToolCall& call);
agent::v1::Event ToolOutput(const std::string& call_id, std::string_view chunk, bool is_stderr);
// `denied_by_policy`: the mode or a rule refused the call without asking anyone.
agent::v1::Event ToolResult(const llm::ToolCall& call, const std::string& content, bool is_error,
                            bool denied_by_policy = false);
agent::v1::Event ApprovalRequested(const agent::v1::PendingApproval& approval);
agent::v1::Event ApprovalResolved(const std::string& call_id, agent::v1::Decision decision,
                                  const std::string& client, const std::string& reason,
                                  const std::vector<std::string>& rules);
agent::v1::Event Compacted(int removed_messages, int kept_messages);
agent::v1::Event ClientsChanged(const std::vector<std::string>& clients);
agent::v1::Event Error(std::string message);

}  // namespace agent::daemon::events
