#include "daemon/policy/call_policy.h"

#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/policy/protected_paths.h"
#include "daemon/tools/path_resolver.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;
using K = CallVerdict::Kind;

bool NameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string AskTheUser(const CallFacts& call) {
  return absl::StrCat("Not run: ", *call.protected_reason,
                      ". Only the user can allow this, by answering an approval request for this "
                      "very call (a permission rule or --yes is not enough): ask the user to make "
                      "the change or to run the agent where they can approve it.");
}

// The agent's own configuration and state (config.json and its rules, the trusted rules, MCP
// approvals, checkpoints), with symlinks resolved: inside a project only when the project is the
// home directory or holds XDG_CONFIG_HOME/XDG_STATE_HOME, and then as protected as `.agent`.
std::vector<std::string> AgentOwnDirs() {
  std::vector<std::string> out;
  for (const std::string& dir : {ConfigDir(), StateDir()}) {
    std::error_code ec;
    std::string canonical = std::filesystem::weakly_canonical(dir, ec).string();
    out.push_back(ec ? AbsolutePath(dir) : canonical);
  }
  return out;
}

bool Inside(const std::string& path, const std::string& dir) {
  return !dir.empty() && (path == dir || (path.size() > dir.size() && path.starts_with(dir) &&
                                          (dir == "/" || path[dir.size()] == '/')));
}

}  // namespace

std::optional<std::string> BashProtectedReason(std::string_view command) {
  for (const std::string& dir : AgentOwnDirs()) {
    if (command.find(dir) != std::string_view::npos) {
      return absl::StrCat("the command names ", dir, ", the agent's own configuration or state");
    }
  }
  std::string lower = absl::AsciiStrToLower(std::string(command));
  for (const char* name :
       {".config/agent", ".local/state/agent", "trusted-rules.json", "mcp-approvals.json"}) {
    if (lower.find(name) != std::string::npos) {
      return absl::StrCat("the command names ", name, ", the agent's own configuration or state");
    }
  }
  for (const std::string name : {".agent", ".git"}) {
    for (size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at + 1)) {
      const size_t end = at + name.size();
      const bool starts = at == 0 || !NameChar(lower[at - 1]);
      const bool ends = end == lower.size() || !(NameChar(lower[end]) || lower[end] == '-');
      if (starts && ends) {
        return absl::StrCat("the command names ", name,
                            ", which holds the agent's own settings or what makes git run code");
      }
    }
  }
  return std::nullopt;
}

CallFacts GatherCallFacts(const std::string& workdir, const std::string& tool, const Json& args) {
  CallFacts f;
  f.tool = tool;
  f.written_args = RuleArguments(workdir, args);
  f.rule_args = f.written_args;
  if (args.contains("path") && args["path"].is_string()) {
    auto resolved = tools::ResolveInside(workdir, args["path"].get<std::string>());
    if (resolved.ok()) {
      std::string rel = tools::RelativeToWorkdir(workdir, *resolved);
      f.rule_args["path"] = rel;
      if (auto why = policy::ProtectedPathReason(rel == "." ? "" : rel); why.has_value()) {
        f.protected_reason =
            absl::StrCat("writing ", rel, " needs a person's approval (", *why, ")");
      }
      for (const std::string& dir : AgentOwnDirs()) {
        if (!f.protected_reason.has_value() && Inside(*resolved, dir)) {
          f.protected_reason = absl::StrCat("writing ", rel,
                                            " needs a person's approval (it is the agent's own "
                                            "configuration or state: rules, trusted rules, MCP "
                                            "approvals)");
        }
      }
    }
    // A path outside the project is refused by the tool itself.
  } else if (args.contains("command") && args["command"].is_string()) {
    f.protected_reason = BashProtectedReason(args["command"].get<std::string>());
  }
  return f;
}

CallVerdict DecideCall(v1::PolicyMode mode, const absl::StatusOr<policy::RuleSet>& rules,
                       const CallFacts& call) {
  if (mode == v1::POLICY_MODE_READ_ONLY) return {K::kRefuse, "Denied: this session is read-only."};
  if (!rules.ok()) {
    return {K::kRefuse,
            absl::StrCat("Denied: gated tools are stopped until the permission rules are fixed: ",
                         rules.status().message())};
  }
  const policy::Verdict verdict = policy::Evaluate(*rules, call.tool, call.rule_args);
  if (verdict == policy::Verdict::kDeny ||
      policy::Evaluate(*rules, call.tool, call.written_args) == policy::Verdict::kDeny) {
    return {K::kRefuse, "Denied by a permission rule of this project."};
  }
  if (call.protected_reason.has_value()) {
    if (mode == v1::POLICY_MODE_ASK) return {K::kAsk, ""};
    return {K::kRefuse, AskTheUser(call)};
  }
  if (verdict == policy::Verdict::kAllow || mode == v1::POLICY_MODE_YES) return {K::kRun, ""};
  if (mode == v1::POLICY_MODE_DENY_UNRULED) {
    return {K::kRefuse, absl::StrCat("Denied: this run does not allow ", call.tool,
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
