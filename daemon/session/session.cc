#include "daemon/session/session.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/tool_env.h"
#include "daemon/policy/rules.h"
#include "daemon/session/turn_runner.h"

namespace agent::daemon {
namespace v1 = agent::v1;

absl::Status RemovedError(const std::string& id) {
  return absl::NotFoundError(
      absl::StrCat("session ", id, " was removed (agent rm); start a new one with agent"));
}

namespace {

SessionState::Init StateInit(Session::Opening& o, const SessionDeps& deps) {
  SessionState::Init init;
  init.workdir = o.workdir;
  init.meta = std::move(o.meta);
  init.transcript = std::move(o.transcript);
  init.settings = std::move(o.settings);
  init.answered = o.answered;
  init.epoch = deps.epoch;
  init.clock = deps.clock;
  init.config = &deps.config;
  init.files = deps.files_for ? deps.files_for(o.workdir, init.meta.id)
                              : DiskSessionFiles(o.workdir, init.meta.id);
  if (deps.sandbox != nullptr) init.sandbox = deps.sandbox->Describe();
  return init;
}

SessionState::FirstWrite FirstWriteOf(Session::Opening::Write w) {
  switch (w) {
    case Session::Opening::Write::kNothing:
      return SessionState::FirstWrite::kNothing;
    case Session::Opening::Write::kMetaOnly:
      return SessionState::FirstWrite::kMetaOnly;
    case Session::Opening::Write::kAll:
      break;
  }
  return SessionState::FirstWrite::kAll;
}

}  // namespace

Session::Session(Opening o, SessionDeps deps)
    : deps_(std::move(deps)), state_(StateInit(o, deps_)), lock_(std::move(o.lock)) {
  rules_ = deps_.rules_for ? deps_.rules_for(workdir()) : nullptr;
  if (!rules_) rules_ = std::make_shared<policy::FixedRuleSource>(policy::RuleSet{});
  hooks_ = MakeHooks();
  TurnRunner::Parts parts;
  parts.state = &state_;
  parts.deps = &deps_;
  parts.hooks = hooks_.get();
  parts.rules = rules_.get();
  parts.files = &state_.files();
  parts.jobs = &jobs_;
  parts.editor_text = &editor_text_;
  parts.checkpointer = [this]() -> checkpoints::Checkpointer& { return checkpointer(); };
  parts.set_mode = [this](v1::PolicyMode mode, const std::string& client) {
    (void)SetPolicy(mode, {}, client);
  };
  turns_ = std::make_unique<TurnRunner>(std::move(parts));
  state_.SetTurnBody([this] { turns_->Main(); });
  state_.Open(o.kind == Opening::Kind::kNew, o.kind == Opening::Kind::kForked, o.prompt,
              std::move(o.prices), o.notice, FirstWriteOf(o.write));
}

Session::~Session() { Shutdown("the session was closed"); }

Session::Opening Session::ForkPoint(int at_message) const {
  Opening o;
  o.workdir = workdir();
  o.kind = Opening::Kind::kForked;
  state_.CopyForFork(&o.transcript, &o.settings, &o.meta);
  o.transcript.Seal("the session was forked while this call ran");
  if (at_message > 0) o.transcript.TruncateTo(static_cast<size_t>(at_message));
  return o;
}

// ---- Commands ---------------------------------------------------------------------------------

std::optional<std::vector<std::string>> Session::FilterToolEnvironment(
    const v1::ToolEnvironment& env) const {
  if (env.variables().empty()) return std::nullopt;  // the latest non-empty one wins
  const ToolEnvPolicy sent{{env.keep().begin(), env.keep().end()},
                           {env.drop().begin(), env.drop().end()}};
  return BuildToolEnvironment({env.variables().begin(), env.variables().end()},
                              MergeToolEnvPolicy(sent, deps_.config.tool_env));
}

void Session::SetToolEnvironment(const v1::ToolEnvironment& env) {
  std::optional<std::vector<std::string>> filtered = FilterToolEnvironment(env);
  if (filtered.has_value()) state_.SetToolEnvironment(*std::move(filtered));
}

absl::StatusOr<int> Session::SendPrompt(std::string text, const std::string& client,
                                        const ModelSettings& model,
                                        const v1::ToolEnvironment& tool_env,
                                        PromptExpansion expansion,
                                        const v1::ClientSettings& settings) {
  return state_.Enqueue({std::move(text), client, std::move(expansion), settings}, model,
                        FilterToolEnvironment(tool_env));
}

absl::Status Session::SetPolicy(v1::PolicyMode mode, const std::vector<std::string>& add_allow,
                                const std::string& client) {
  if (!add_allow.empty()) {
    for (const std::string& r : add_allow) {
      if (auto p = policy::ParseRule(r); !p.ok()) return p.status();
    }
    if (auto s = turns_->guard().RecordPersonsRules(add_allow); !s.ok()) return s;
  }
  if (mode == v1::POLICY_MODE_UNSPECIFIED) return absl::OkStatus();
  agent::MutexLock policy(&policy_mu_);
  std::vector<std::shared_ptr<Session>> children = state_.SetMode(mode, client);
  // Outside this session's state: a child takes its own (and passes the mode to its children).
  for (const std::shared_ptr<Session>& c : children) (void)c->SetPolicy(mode, {});
  return absl::OkStatus();
}

void Session::AddRunningChild(const std::shared_ptr<Session>& child) {
  agent::MutexLock policy(&policy_mu_);  // a SetPolicy here waits, then reaches the child too
  (void)child->SetPolicy(state_.AddRunningChild(child), {});
}

absl::StatusOr<int> Session::Compact() {
  if (absl::Status held = state_.HoldTurns(std::nullopt, "compact"); !held.ok()) return held;
  absl::StatusOr<int> r = turns_->Compact();
  state_.ReleaseTurns("", "");
  return r;
}

void Session::Remove(const std::string& by_client) {
  state_.MarkRemoved(by_client);
  Shutdown("the session was deleted");
}

void Session::Shutdown(std::string_view reason) {
  state_.StopTurns();
  state_.JoinTurnThread();
  jobs_.KillAll();                   // background jobs end with the session, and none starts after
  hooks_->End(std::string(reason));  // SessionEnd, once
  if (!state_.Close(reason)) return;
  if (state_.unsaved()) {
    std::fprintf(stderr, "agentd: session %s could not be saved at shutdown: %s\n", id().c_str(),
                 std::string(state_.unsaved_error().message()).c_str());
  }
}

}  // namespace agent::daemon
