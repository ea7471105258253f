// What a `task` call answers the parent's model: the child's final answer, capped, with the
// child's id so the model (and the person) can find the rest. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "agent/v1/agent.pb.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::subagents {

inline constexpr size_t kMaxTaskResultBytes = 16 << 10;

struct ChildEnd {
  std::string child_id;
  std::string agent;
  agent::v1::TurnOutcome outcome = agent::v1::TURN_OUTCOME_UNSPECIFIED;
  std::string answer;  // the child's last text
  std::string error;   // for ERROR
};

// DONE: the answer (is_error false); anything else an error naming how the child ended, with
// what it wrote so far. An answer over `cap` bytes is cut at a line (or character) boundary
// and says where the whole one is.
tools::ToolOutcome FormatTaskResult(const ChildEnd& end, size_t cap = kMaxTaskResultBytes);

}  // namespace agent::daemon::subagents
