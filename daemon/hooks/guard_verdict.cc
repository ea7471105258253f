#include "daemon/hooks/guard_verdict.h"

#include "absl/strings/str_cat.h"

namespace agent::daemon::hooks {

namespace v1 = agent::v1;

CallVerdict ApplyGuard(CallVerdict verdict, const ToolGuard& guard, v1::PolicyMode mode,
                       bool protected_path) {
  using K = CallVerdict::Kind;
  if (guard.permission == Permission::kDeny) {
    return {K::kRefuse, guard.reason.empty() ? "Refused by a hook."
                                             : absl::StrCat("Refused by a hook: ", guard.reason)};
  }
  if (verdict.kind == K::kRefuse) return verdict;
  if (guard.failed || guard.permission == Permission::kAsk) {
    if (mode == v1::POLICY_MODE_READ_ONLY || mode == v1::POLICY_MODE_DENY_UNRULED ||
        mode == v1::POLICY_MODE_PLAN) {
      return {K::kRefuse, absl::StrCat("Not run: ",
                                       guard.failed ? "a hook guarding this call failed ("
                                                    : "a hook asked for a person's answer (",
                                       guard.failed ? guard.failure : guard.reason,
                                       ") and nobody can be asked in this mode.")};
    }
    return {K::kAsk, ""};
  }
  if (guard.permission == Permission::kAllow && verdict.kind == K::kAsk && !protected_path) {
    return {K::kRun, ""};
  }
  return verdict;
}

}  // namespace agent::daemon::hooks
