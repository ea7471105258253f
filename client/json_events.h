// The --json output: one JSON object per line for each event, and for a one-shot run a last
// line with the result, shaped like `claude -p --output-format json`'s. Integers are JSON
// numbers (proto3's JSON mapping would write 64-bit ones as strings). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "agent/v1/agent.pb.h"

namespace agent::client {

// The event as one line of JSON (no newline), field names as in agent.proto. A child
// session's event (ChildProgress, a child's ApprovalRequested) also has "child_id" at the top.
std::string EventJsonLine(const agent::v1::Event& event);

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
