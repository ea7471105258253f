// CallPolicy: what the session's mode and the permission rules decide about one gated call,
// before anyone is asked. Pure; thread-safe.
//
// Order: a read-only session refuses; a broken rule file refuses (fail closed); deny rules
// refuse; allow rules run it; --yes runs it; deny-unruled refuses; otherwise the clients are
// asked.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "daemon/policy/rules.h"

namespace agent::daemon {

struct CallVerdict {
  enum class Kind { kRun, kRefuse, kAsk };
  Kind kind = Kind::kAsk;
  std::string refusal;  // kRefuse: what the model is told
};

// `rule_args`: the call's arguments with `path` made relative to the workdir.
CallVerdict DecideCall(agent::v1::PolicyMode mode, const absl::StatusOr<policy::RuleSet>& rules,
                       const std::string& tool, const Json& rule_args);

// `args` with a `path` inside `workdir` written relative to it, as rules are written.
Json RuleArguments(const std::string& workdir, const Json& args);

}  // namespace agent::daemon
