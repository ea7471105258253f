#include "daemon/call_policy.h"

#include "absl/strings/str_cat.h"

namespace agent::daemon {

namespace v1 = agent::v1;

CallVerdict DecideCall(v1::PolicyMode mode, const absl::StatusOr<policy::RuleSet>& rules,
                       const std::string& tool, const Json& rule_args) {
  using K = CallVerdict::Kind;
  if (mode == v1::POLICY_MODE_READ_ONLY) return {K::kRefuse, "Denied: this session is read-only."};
  if (mode == v1::POLICY_MODE_YES) return {K::kRun, ""};
  if (!rules.ok()) return {K::kRefuse, "Denied: " + std::string(rules.status().message())};
  switch (policy::Evaluate(*rules, tool, rule_args)) {
    case policy::Verdict::kAllow:
      return {K::kRun, ""};
    case policy::Verdict::kDeny:
      return {K::kRefuse, "Denied by a permission rule of this project."};
    case policy::Verdict::kAsk:
      break;
  }
  if (mode == v1::POLICY_MODE_DENY_UNRULED) {
    return {K::kRefuse, absl::StrCat("Denied: this run does not allow ", tool,
                                     " (the user did not pass --yes).")};
  }
  return {K::kAsk, ""};
}

Json RuleArguments(const std::string& workdir, const Json& args) {
  Json rule_args = args;
  if (args.contains("path") && args["path"].is_string()) {
    std::string p = args["path"].get<std::string>();
    std::string prefix = workdir + "/";
    if (p.rfind(prefix, 0) == 0) rule_args["path"] = p.substr(prefix.size());
  }
  return rule_args;
}

}  // namespace agent::daemon
