#include "daemon/sandbox/sandbox.h"

#include "absl/strings/str_cat.h"

namespace agent::daemon::sandbox {

Sandbox::Sandbox(SandboxPolicy policy) : policy_(std::move(policy)) {
  if (policy_.mode != SandboxMode::kOff) probe_ = Probe(policy_);
}

std::string Sandbox::Problem() const {
  if (policy_.mode == SandboxMode::kOff || probe_.available) return "";
  return absl::StrCat(probe_.reason, ". Fix: ", probe_.fix);
}

std::string Sandbox::Describe() const {
  if (policy_.mode == SandboxMode::kOff) {
    return "off (commands are not confined; every one is asked about unless a rule or --yes "
           "allows it)";
  }
  if (!probe_.available) return absl::StrCat("unavailable: ", Problem());
  return absl::StrCat(ModeName(policy_.mode), ", network ", policy_.network ? "on" : "off");
}

std::vector<std::string> Sandbox::Wrap(const SandboxTarget& target, const std::string& command,
                                       bool network) const {
  SandboxPolicy p = policy_;
  p.network = p.network || network;
  return BwrapArgv(p, target, command);
}

std::vector<std::string> Sandbox::Options(const SandboxTarget& target, bool network) const {
  SandboxPolicy p = policy_;
  p.network = p.network || network;
  return BwrapOptions(p, target);
}

std::string SandboxNotice(const Sandbox* sandbox) {
  if (sandbox == nullptr || sandbox->Confines()) return "";
  if (sandbox->policy().mode == SandboxMode::kOff) {
    return "sandbox: off (\"sandbox\": \"off\" in config.json): bash commands run unconfined";
  }
  return absl::StrCat("sandbox: unavailable, so bash commands are asked about (auto mode too): ",
                      sandbox->Problem());
}

std::string RefusalHint(const SandboxPolicy& policy) {
  return absl::StrCat(
      "[sandbox (", ModeName(policy.mode), ", network ", policy.network ? "on" : "off",
      "): writes outside the project, to .git/hooks, .git/config and .agent/, the network",
      " and the user's secrets are refused; if the command needs them, call bash again with "
      "escalate: true and a justification, and a person decides]");
}

}  // namespace agent::daemon::sandbox
