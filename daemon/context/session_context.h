// What a session keeps for this folder's features: the current plan, the usage totals, the
// instruction files in its system message and the sizes /context reports. Saved in the
// session's meta file under "context" so totals survive a restart. Thread-compatible: the
// Session guards it with its mutex.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "daemon/context/instructions.h"
#include "daemon/context/usage.h"

namespace agent::daemon::context {

struct SessionContext {
  UsageMeter usage;
  PriceTable prices;  // from the config when the session was created or loaded
  std::optional<agent::v1::Plan> plan;
  std::vector<agent::v1::InstructionFile> instructions;
  int64_t base_chars = 0;         // the system message without the instruction files
  int64_t instruction_chars = 0;  // the instruction section
  // The size of the last request as the provider counted it (prompt + completion, since the
  // reply is part of the next request) and the transcript length it covered; 0: unknown.
  int64_t reported_tokens = 0;
  size_t reported_messages = 0;
  // Told to the clients when the next turn starts (nobody is attached at creation).
  std::string pending_notice;

  // Takes the instruction list and sizes of a freshly built system message.
  void SetPrompt(const Instructions& instructions, size_t base_chars, size_t total_chars);
  Json ToJson() const;
  void LoadJson(const Json& j);
};

// {"explanation", "plan": [{"step", "status"}]} as normalised by tools::NormalizePlan.
agent::v1::Plan PlanFromJson(const Json& j);

// "Instructions in effect: AGENTS.md (1.2 KiB), … " plus the cut note; empty without files.
std::string InstructionsNotice(const Instructions& instructions);

// Session totals from a meta file's "context" (for sessions listed without loading them).
agent::v1::Usage UsageFromContextJson(const Json& context);

}  // namespace agent::daemon::context
