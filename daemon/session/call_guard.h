// CallGuard: the verdict on a tool call before it runs, and what hooks add after it ran.
// In order: the PreToolUse hooks (they may change the input, refuse, or say allow or ask);
// for gated tools the mode and the rules (call_policy.h, escalation.h), where a deny rule
// still beats a hook's allow; then the PermissionRequest hooks; last a person, through the
// session. A hook that failed never fails open, and a protected path is a person's decision
// whatever the mode, the rules or a hook say.
//
// It holds none of the session's state: what it needs of the session (the mode, the clients,
// the tool context) it asks its Host, which takes the session's lock briefly. Nothing here
// runs under that lock: hooks, rule files and the trust store are read and written without it.
// Thread-safe: a batch's calls are guarded from several threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "agent/v1/agent.pb.h"
#include "common/json.h"
#include "common/mutex.h"
#include "daemon/hooks/session_hooks.h"
#include "daemon/llm/model_types.h"
#include "daemon/policy/call_policy.h"
#include "daemon/policy/rule_source.h"
#include "daemon/session/approval_gate.h"
#include "daemon/tools/tool.h"

namespace agent::daemon {

class CallGuard {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    // The session's policy mode now (a person may change it mid-turn).
    virtual agent::v1::PolicyMode Mode() = 0;
    // Shown to the people attached: an error, or a notice.
    virtual void Tell(std::string text, bool error) = 0;
    virtual tools::ToolContext MakeToolContext(const std::string& call_id) = 0;
    // An edit that runs unasked: the diff the people are shown with its result.
    virtual void RememberDiff(const std::string& call_id, std::string diff) = 0;
    // Asks the people attached about `approval` and waits for the first answer; nullopt when
    // the turn was cancelled meanwhile.
    virtual std::optional<ApprovalGate::Answer> Ask(const agent::v1::PendingApproval& approval) = 0;
  };

  // `host`, `rules` and `hooks` outlive the guard. `confines`: commands run in a sandbox that
  // confines them (auto mode and escalations depend on it).
  CallGuard(Host* host, std::string workdir, policy::RuleSource* rules, hooks::SessionHooks* hooks,
            bool confines);

  // Every call once its arguments were checked against `tool`'s schema: nullopt to run it, or
  // the outcome that answers it instead. May change `args` (a hook's updated input, checked
  // against the schema as the model's was before anything reads it).
  std::optional<tools::ToolOutcome> Before(const llm::ToolCall& call, const tools::Tool& tool,
                                           Json* args);
  // A gated call without hooks' say (Before without PreToolUse).
  std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call, const Json& args) {
    return Decide(call, args, hooks::ToolGuard{});
  }
  // A call that ran: the PostToolUse hooks may add to its result.
  void After(const llm::ToolCall& call, const Json& args, tools::ToolOutcome* outcome);

  // A person chose these allow rules ("allow always", /allow): trusted for this project, then
  // appended to its settings file.
  absl::Status RecordPersonsRules(const std::vector<std::string>& rules) const;

 private:
  std::optional<tools::ToolOutcome> Decide(const llm::ToolCall& call, const Json& args,
                                           const hooks::ToolGuard& guard);
  // PermissionRequest hooks on a call about to be asked: kRun, kRefuse, or kAsk.
  CallVerdict PermissionHooks(const llm::ToolCall& call, const Json& args, bool protected_path);
  std::optional<tools::ToolOutcome> AskPerson(const llm::ToolCall& call, const Json& args,
                                              const CallFacts& facts);
  void RememberUnaskedDiff(const llm::ToolCall& call, const Json& args);
  // A call that runs unasked because a learned rule allows it (the mode alone would have asked
  // or refused): the clients are told which rule ("allowed by bash(make *)").
  // `facts`: the call's, as gathered before the verdict.
  void TellAllowingRules(const Json& args, agent::v1::PolicyMode mode,
                         const absl::StatusOr<policy::RuleSet>& rules, const CallFacts& facts);

  Host* const host_;
  const std::string workdir_;
  policy::RuleSource* const rules_;
  hooks::SessionHooks* const hooks_;
  const bool confines_;
  agent::Mutex mu_;
  std::string rules_error_shown_ ABSL_GUARDED_BY(mu_);  // told to the people once
};

}  // namespace agent::daemon
