#include "daemon/sandbox/sandbox.h"

#include <unistd.h>

#include <atomic>

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
  if (!policy_.network_problem.empty()) {
    return absl::StrCat(ModeName(policy_.mode), ", network off: ", policy_.network_problem);
  }
  if (policy_.proxy.has_value()) {
    return absl::StrCat(ModeName(policy_.mode), ", network: ", policy_.proxy->allow.size(),
                        " allowed domain pattern(s) through the proxy");
  }
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

absl::StatusOr<std::unique_ptr<NetworkProxy>> Sandbox::StartProxy(
    bool network, std::function<void(const ProxyEvent&)> on_event) const {
  if (network || policy_.network || !policy_.proxy.has_value()) {
    return std::unique_ptr<NetworkProxy>();
  }
  if (policy_.net_bridge.empty() || policy_.proxy_root.empty()) {
    return absl::FailedPreconditionError(
        "the sandbox's network proxy cannot start: agentd-net-bridge is not installed beside "
        "agentd");
  }
  static std::atomic<uint64_t> counter{0};
  const std::string dir = absl::StrCat(policy_.proxy_root, "/net-", ::getpid(), "-", counter++);
  ProxyOptions options;
  options.rules = *policy_.proxy;
  options.test_loopback_port = policy_.test_loopback_port;
  options.on_event = std::move(on_event);
  return NetworkProxy::Start(dir, std::move(options));
}

std::string SandboxNotice(const Sandbox* sandbox) {
  if (sandbox == nullptr || sandbox->Confines()) return "";
  if (sandbox->policy().mode == SandboxMode::kOff) {
    return "sandbox: off (\"sandbox\": \"off\" in config.json): bash commands run unconfined";
  }
  return absl::StrCat("sandbox: unavailable, so bash commands are asked about (auto mode too): ",
                      sandbox->Problem());
}

namespace {

bool Has(std::string_view line, std::string_view what) {
  return line.find(what) != std::string_view::npos;
}

bool UnderDir(std::string_view path, std::string_view dir) {
  return path.starts_with(dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

// An absolute path on `line` outside the places a confined command may write.
bool NamesAPathOutside(std::string_view line, const std::string& workdir) {
  for (size_t at = line.find('/'); at != std::string_view::npos; at = line.find('/', at + 1)) {
    if (at > 0 && line[at - 1] != ' ' && line[at - 1] != '\'' && line[at - 1] != '"' &&
        line[at - 1] != '`') {
      continue;  // inside a word (a relative path's slash)
    }
    size_t end = line.find_first_of(" '\":`", at);
    std::string_view path = line.substr(at, end == std::string_view::npos ? end : end - at);
    if (!UnderDir(path, workdir) && !UnderDir(path, "/tmp") && !UnderDir(path, "/dev")) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool SandboxPlausiblyRefused(std::string_view output, const SandboxPolicy& policy,
                             const std::string& workdir) {
  static constexpr std::string_view kNameLookup[] = {"Could not resolve",
                                                     "Temporary failure in name resolution",
                                                     "Name or service not known",
                                                     "No address associated with hostname",
                                                     "getaddrinfo",
                                                     "Network is unreachable",
                                                     "Failed to establish a new connection",
                                                     "ENOTFOUND",
                                                     "EAI_AGAIN"};
  while (!output.empty()) {
    const size_t nl = output.find('\n');
    const std::string_view line = output.substr(0, nl);
    output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
    if (Has(line, "Read-only file system")) return true;
    bool hidden = false;
    for (const std::string& h : policy.hide) hidden = hidden || Has(line, h);
    if (hidden && (Has(line, "No such file") || Has(line, "Permission denied") ||
                   Has(line, "Not a directory"))) {
      return true;
    }
    if ((Has(line, "Permission denied") || Has(line, "Operation not permitted")) &&
        NamesAPathOutside(line, workdir)) {
      return true;
    }
    if (!policy.network) {
      for (std::string_view signal : kNameLookup) {
        if (Has(line, signal)) return true;
      }
    }
  }
  return false;
}

std::string RefusalHint(const SandboxPolicy& policy) {
  return absl::StrCat(
      "[sandbox (", ModeName(policy.mode), ", network ",
      policy.network             ? "on"
      : policy.proxy.has_value() ? "to allowed domains"
                                 : "off",
      "): writes outside the project, to .agent/ and to .git (so git commit, add, checkout, "
      "stash, merge, fetch and init write nothing), the network and the user's secrets are "
      "refused; if the command needs them, call bash again with escalate: true and a "
      "justification, and a person decides]");
}

}  // namespace agent::daemon::sandbox
