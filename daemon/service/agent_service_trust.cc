// TrustProjectRules: what `agent trust` and /trust list and record: the project's allow rules
// (policy/trusted_rules.h) and its hooks (hooks/hook_trust.h). A hook travels in the rules'
// fields as its Display() text ("hook PreToolUse [bash] (60 s): ./guard.sh"), which names
// every part of what is trusted, so clients list and trust hooks as they do rules.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/paths.h"
#include "common/reaction_scope.h"
#include "daemon/hooks/hook_loader.h"
#include "daemon/hooks/hook_trust.h"
#include "daemon/policy/personal_rules.h"
#include "daemon/policy/rule_source.h"
#include "daemon/policy/trusted_rules.h"
#include "daemon/service/agent_service.h"
#include "daemon/service/peer_origin.h"
#include "daemon/store/legacy_sessions.h"

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

bool IsHook(std::string_view text) { return text.rfind(hooks::kHookDisplayPrefix, 0) == 0; }

// The project's hooks nobody trusted, as Display() texts.
absl::StatusOr<std::vector<std::string>> UntrustedHooks(const std::string& project) {
  absl::StatusOr<std::vector<hooks::HookCommand>> all = hooks::ProjectHooks(project);
  if (!all.ok()) return all.status();
  const std::set<std::string> trusted = hooks::TrustedHookKeys(hooks::TrustedHooksPath(), project);
  std::vector<std::string> out;
  for (const hooks::HookCommand& h : *all) {
    if (!trusted.count(h.TrustKey())) out.push_back(h.Display());
  }
  return out;
}

// Trusts the hooks the file holds now whose Display() is in `shown` (never a text blind).
absl::StatusOr<std::vector<std::string>> TrustShownHooks(const std::string& project,
                                                         const std::vector<std::string>& shown) {
  absl::StatusOr<std::vector<hooks::HookCommand>> all = hooks::ProjectHooks(project);
  if (!all.ok()) return all.status();
  std::vector<std::string> keys;
  std::vector<std::string> named;
  for (const hooks::HookCommand& h : *all) {
    if (std::find(shown.begin(), shown.end(), h.Display()) == shown.end()) continue;
    keys.push_back(h.TrustKey());
    named.push_back(h.Display());
  }
  absl::StatusOr<std::vector<std::string>> added =
      hooks::TrustHooks(hooks::TrustedHooksPath(), project, keys);
  if (!added.ok()) return added.status();
  return named;
}

absl::Status Answer(const v1::TrustProjectRulesRequest& req, v1::TrustProjectRulesResponse* resp) {
  absl::StatusOr<std::string> project = ProjectDirectory(req.workdir());
  if (!project.ok()) return project.status();
  // An older agentd's sessions in .agent/sessions/ (legacy_sessions.h), apart from the rules.
  if (req.import_sessions()) {
    resp->set_sessions_note(
        ImportLegacySessions(*project, {req.session_ids().begin(), req.session_ids().end()}).note);
    return absl::OkStatus();
  }
  if (req.list_sessions()) {
    for (const LegacySession& s : ListLegacySessions(*project)) {
      resp->add_sessions(s.title.empty() ? s.id : absl::StrCat(s.id, "  ", s.title));
    }
    return absl::OkStatus();
  }
  resp->set_settings_path(ProjectSettingsPath(*project));
  // A file that cannot be used is reported before anything is recorded.
  if (absl::StatusOr<std::vector<std::string>> before = Untrusted(*project); !before.ok()) {
    return before.status();
  }
  std::vector<std::string> rules;
  std::vector<std::string> shown_hooks;
  for (const std::string& r : req.rules()) (IsHook(r) ? shown_hooks : rules).push_back(r);
  if (req.revoke() || !rules.empty()) {
    absl::StatusOr<std::vector<std::string>> changed =
        req.revoke() ? policy::RevokeRules(policy::TrustedRulesPath(), *project, rules)
                     : policy::TrustRules(policy::TrustedRulesPath(), *project, rules);
    if (!changed.ok()) return changed.status();
    for (std::string& r : *changed) resp->add_changed(std::move(r));
  }
  if (req.revoke() && req.rules().empty()) {
    if (absl::Status s = hooks::RevokeHooks(hooks::TrustedHooksPath(), *project).status();
        !s.ok()) {
      return s;
    }
  } else if (!shown_hooks.empty() && !req.revoke()) {
    absl::StatusOr<std::vector<std::string>> trusted = TrustShownHooks(*project, shown_hooks);
    if (!trusted.ok()) return trusted.status();
    for (std::string& h : *trusted) resp->add_changed(std::move(h));
  }
  absl::StatusOr<std::vector<std::string>> after = Untrusted(*project);
  if (!after.ok()) return after.status();
  for (std::string& r : *after) resp->add_untrusted(std::move(r));
  // A hooks section that does not parse runs nothing and is reported by the sessions.
  if (absl::StatusOr<std::vector<std::string>> h = UntrustedHooks(*project); h.ok()) {
    for (std::string& d : *h) resp->add_untrusted(std::move(d));
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::TrustProjectRules(grpc::CallbackServerContext* ctx,
                                                          const v1::TrustProjectRulesRequest* req,
                                                          v1::TrustProjectRulesResponse* resp) {
  ReactionScope reaction;
  // Listing is harmless; recording or revoking trust is a person's act.
  if (req->revoke() || req->rules_size() > 0 || req->import_sessions()) {
    if (absl::Status t = RefuseToolProcess(*ctx, "trust a project's rules"); !t.ok()) {
      return FinishUnary(ctx, t);
    }
  }
  auto* reactor = ctx->DefaultReactor();
  // The trust stores and settings are files, and an import moves sessions' files: off the
  // gRPC threads.
  bool queued =
      workers_.Submit([req, resp, reactor] { reactor->Finish(ToGrpcStatus(Answer(*req, resp))); });
  if (!queued) reactor->Finish(ToGrpcStatus(absl::UnavailableError("the daemon is stopping")));
  return reactor;
}

}  // namespace agent::daemon
