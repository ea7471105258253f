// CallPolicy: what the session's mode and the permission rules decide about one gated call,
// before anyone is asked. Pure; thread-safe.
//
// Order: a read-only session refuses; a broken rule file refuses (fail closed); deny rules
// refuse (under --yes too); a call that would write a protected path (the agent's own
// configuration, what makes git run code: policy/protected_paths.h) is asked about in ask mode
// and refused otherwise, whatever the allow rules say; allow rules run it; --yes runs it;
// deny-unruled refuses; otherwise the clients are asked.
//
// Path rules match the path the call would really write: symlinks and `..` resolved inside
// the workdir (a deny rule also matches the path as the model wrote it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
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

// What the rules are matched against for one call.
struct CallFacts {
  std::string tool;
  Json rule_args;     // `path` resolved and relative to the workdir
  Json written_args;  // `path` relative to the workdir as the model wrote it
  std::optional<std::string> protected_reason;  // why it must be a person's decision
};

// Resolves the call's `path` (or, for bash, looks for protected names in the command).
CallFacts GatherCallFacts(const std::string& workdir, const std::string& tool, const Json& args);

CallVerdict DecideCall(agent::v1::PolicyMode mode, const absl::StatusOr<policy::RuleSet>& rules,
                       const CallFacts& call);

// `args` with a `path` inside `workdir` written relative to it, as rules are written.
Json RuleArguments(const std::string& workdir, const Json& args);

// Why a bash command line may write what protected_paths.h protects: it names `.agent` or
// `.git` as a path component (`cd .git && …`, `> .agent/settings.json`). Conservative: a
// read of those names is asked about too.
std::optional<std::string> BashProtectedReason(std::string_view command);

}  // namespace agent::daemon
