// The daemon's events as ACP `session/update` payloads (the "update" object of each
// notification): text and reasoning deltas become agent_message_chunk / agent_thought_chunk,
// tool calls tool_call then tool_call_update (pending, in_progress with the command's output
// so far, completed or failed with the result or the diff), plans `plan`, prompts sent by
// other clients (a terminal) user_message_chunk. Turn ends, approvals and snapshots are the
// session's business (acp_session.h), not this mapping's. Remembers each open call's tool
// and output; not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"
#include "common/json.h"

namespace agent::client::acp {

// The most of a tool's output an editor is sent at once (each update carries all of it).
inline constexpr size_t kMaxToolOutputBytes = 64u << 10;

class UpdateMapper {
 public:
  // `own_client`: this connection's client name, whose prompts the editor already shows.
  // `cwd`: where the session's tools run, to make paths absolute.
  UpdateMapper(std::string own_client, std::string cwd)
      : own_client_(std::move(own_client)), cwd_(std::move(cwd)) {}

  // The updates `e` becomes, in order (often none).
  std::vector<Json> Map(const agent::v1::Event& e);

  // The ToolCallUpdate a permission request shows for `a`.
  Json PermissionToolCall(const agent::v1::PendingApproval& a) const;

  // The updates that replay a saved transcript (OpenAI message list) for session/load.
  std::vector<Json> Replay(const Json& messages);

 private:
  struct Call {
    std::string name;
    std::string arguments;
    std::string output;  // the tail, at most kMaxToolOutputBytes
  };
  Json Result(const agent::v1::ToolResult& r);
  std::string own_client_;
  std::string cwd_;
  std::map<std::string, Call> calls_;  // by call id, from ToolCallStarted to ToolResult
};

// ACP's plan entry status for ours.
std::string PlanStatus(agent::v1::PlanStepStatus s);

}  // namespace agent::client::acp
