// THE ONE RULE of DESIGN.md, checked one message at a time: what Transcript keeps on every
// change, what a loaded file and a replayed journal are held to, and what the debug builds
// re-check. Feeding messages in order costs the same per message at message 10 and at 10,000.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent {

// True when `m` is an assistant message with a non-empty tool_calls list.
bool HasToolCalls(const Json& m);
// One tool_calls entry's id, or InvalidArgument saying what is wrong with its shape.
absl::StatusOr<std::string> ToolCallId(const Json& call);

class TranscriptRule {
 public:
  // What message `m` would break as the next one (empty when it keeps the rule); nothing
  // changes.
  std::vector<std::string> Check(const Json& m) const;
  // Check, then takes `m` in as the next message (a broken one too, so later problems are
  // reported as a whole validation would).
  std::vector<std::string> Add(const Json& m);
  // What is wrong at the end: the last assistant message's unanswered calls, unless an open
  // tail is allowed.
  std::vector<std::string> Finish(bool allow_open_tail) const;
  size_t size() const { return count_; }

 private:
  void ReportUnanswered(size_t at, std::vector<std::string>* problems) const;
  void Take(const Json& m);

  size_t count_ = 0;
  std::unordered_set<std::string> all_ids_;
  std::vector<std::string> open_;  // calls of the current assistant message, in order
  std::unordered_set<std::string> open_set_;
  size_t open_from_ = 0;
};

// Everything wrong with `messages` by the rule (empty when valid). With `allow_open_tail`,
// unanswered calls of the last assistant message are not a problem.
std::vector<std::string> ValidateMessages(const Json& messages, bool allow_open_tail);

}  // namespace agent
