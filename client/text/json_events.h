// The --json output: one JSON object per line for each event, and for a one-shot run a last
// line with the result, shaped like `claude -p --output-format json`'s. Every line has a
// "type". Integers are JSON numbers (proto3's JSON mapping would write 64-bit ones as
// strings), tool calls' arguments are objects, costs are rounded. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "agent/v1/agent.pb.h"

namespace agent::client {

// The event as one line of JSON (no newline), field names as in agent.proto, and "type": the
// name of the event's field ("snapshot", "text_delta", "tool_result", …). A child session's
// event (ChildProgress, a child's ApprovalRequested) also has "child_id" at the top.
std::string EventJsonLine(const agent::v1::Event& event);

// What stands for a snapshot event (the whole transcript and system prompt) unless a script
// asked for it: {"type":"session_started","session_id":…,"epoch":…,"seq":…,"workdir":…,
// "model":…,"title":…,"message_count":…}.
std::string SessionStartedJsonLine(const agent::v1::Event& snapshot_event);

// A cost in USD rounded to a hundredth of a cent (0.011328000000000001 -> 0.0113).
double RoundedCost(double usd);

struct TurnResult {
  agent::v1::TurnEnded ended;  // outcome, error, usage totals, duration, denied calls
  std::string final_text;      // the text of the turn's last assistant message
  std::string session_id;
  int exit_code = 0;
};

// {"type":"result","subtype":"success"|"error_max_turns"|"error_cancelled"|
//  "error_during_execution","is_error":…,"outcome":…,"result":…,"session_id":…,
//  "usage":{…},"duration_ms":…,"denied_calls":…,"exit_code":…[,"error":…][,"cancelled_by":…]}
std::string ResultJsonLine(const TurnResult& result);

}  // namespace agent::client
