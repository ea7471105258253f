// Token use and cost: per request (the provider's usage), summed per turn and per session,
// with the cost from a configured price table. Thread-compatible: the Session guards it.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"

namespace agent::daemon::context {

// US dollars per million tokens.
struct Price {
  double input = 0;
  double output = 0;
  double cached_input = -1;  // < 0: same as input
  double cache_write = -1;   // < 0: 1.25 x input (Anthropic's price for a 5-minute write)
};

// Config "prices": {"MODEL": {"input": …, "output": …, "cached_input": …, "cache_write": …}}.
// A model absent from the table costs 0.
class PriceTable {
 public:
  // InvalidArgument for a malformed table (a price that is not a non-negative number).
  static absl::StatusOr<PriceTable> FromJson(const Json& prices);
  const Price* Find(const std::string& model) const;
  // What one request's usage cost with `model`'s price; 0 without one.
  double Cost(const std::string& model, const llm::Usage& usage) const;
  bool empty() const { return prices_.empty(); }

 private:
  std::map<std::string, Price> prices_;
};

void Add(agent::v1::Usage* total, const agent::v1::Usage& more);

class UsageMeter {
 public:
  // The current turn's counters start from zero.
  void BeginTurn() { turn_.Clear(); }
  // One model request answered; `usage` may be absent (the provider sent none).
  void AddRequest(const std::optional<llm::Usage>& usage, double cost);
  void AddRetry();
  // Another session's use counted here too (a child's, made by the `task` tool).
  void AddOther(const agent::v1::Usage& usage) {
    Add(&turn_, usage);
    Add(&session_, usage);
  }
  const agent::v1::Usage& turn() const { return turn_; }
  const agent::v1::Usage& session() const { return session_; }

  // The session totals as saved in the meta file, and back; unknown keys are ignored.
  Json ToJson() const;
  void LoadJson(const Json& j);

 private:
  agent::v1::Usage turn_;
  agent::v1::Usage session_;
};

// The per-request Usage event.
agent::v1::Event UsageEvent(const llm::Usage& usage, double cost);

}  // namespace agent::daemon::context
