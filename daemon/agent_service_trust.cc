// TrustProjectRules: what `agent trust` and /trust list and record (policy/trusted_rules.h).

#include "common/grpc_status.h"
#include "common/paths.h"
#include "daemon/agent_service.h"
#include "daemon/peer_origin.h"
#include "daemon/policy/personal_rules.h"
#include "daemon/policy/rule_source.h"
#include "daemon/policy/trusted_rules.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

// The project's untrusted allow rules, read as a session reads them (no symlink followed).
absl::StatusOr<std::vector<std::string>> Untrusted(const std::string& project) {
  const std::string settings = ProjectSettingsPath(project);
  const std::string mine = policy::ProjectLocalSettingsPath(project);
  policy::FileRuleSource source(
      {settings, mine}, {},
      policy::ProjectTrust{settings, policy::TrustedRulesPath(), project, mine});
  if (absl::Status s = source.Rules().status(); !s.ok()) return s;
  return source.UntrustedRules();
}

absl::Status Answer(const v1::TrustProjectRulesRequest& req, v1::TrustProjectRulesResponse* resp) {
  absl::StatusOr<std::string> project = ProjectDirectory(req.workdir());
  if (!project.ok()) return project.status();
  resp->set_settings_path(ProjectSettingsPath(*project));
  // A file that cannot be used is reported before anything is recorded.
  if (absl::StatusOr<std::vector<std::string>> before = Untrusted(*project); !before.ok()) {
    return before.status();
  }
  const std::vector<std::string> rules(req.rules().begin(), req.rules().end());
  if (req.revoke() || !rules.empty()) {
    absl::StatusOr<std::vector<std::string>> changed =
        req.revoke() ? policy::RevokeRules(policy::TrustedRulesPath(), *project, rules)
                     : policy::TrustRules(policy::TrustedRulesPath(), *project, rules);
    if (!changed.ok()) return changed.status();
    for (std::string& r : *changed) resp->add_changed(std::move(r));
  }
  absl::StatusOr<std::vector<std::string>> after = Untrusted(*project);
  if (!after.ok()) return after.status();
  for (std::string& r : *after) resp->add_untrusted(std::move(r));
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::TrustProjectRules(grpc::CallbackServerContext* ctx,
                                                          const v1::TrustProjectRulesRequest* req,
                                                          v1::TrustProjectRulesResponse* resp) {
  // Listing is harmless; recording or revoking trust is a person's act.
  if (req->revoke() || req->rules_size() > 0) {
    if (absl::Status t = RefuseToolProcess(*ctx, "trust a project's rules"); !t.ok()) {
      return FinishUnary(ctx, t);
    }
  }
  return FinishUnary(ctx, Answer(*req, resp));
}

}  // namespace agent::daemon
