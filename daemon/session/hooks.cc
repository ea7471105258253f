// Where a Session fires its hooks (daemon/hooks/): the prompt about to be taken (SessionStart,
// UserPromptSubmit), each tool call (PreToolUse before the rules, PermissionRequest before a
// person is asked, PostToolUse after it ran) and the end of a turn (Stop / SubagentStop).
// The hooks run without the session's lock; what they decide enters the transcript under it,
// so every call still gets exactly one result, whatever a hook did.
#include "absl/strings/str_cat.h"
#include "daemon/hooks/guard_verdict.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"
#include "daemon/store.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

constexpr const char* kIdleMessage = "agent is waiting for your input";

}  // namespace

std::unique_ptr<hooks::SessionHooks> Session::MakeHooks() {
  hooks::SessionHooks::Info info;
  info.session_id = id_;
  info.project = workdir_;
  info.transcript_path = TranscriptPath(workdir_, id_);
  hooks::HookFiles files;
  {
    SessionMutexLock l(&mu_);
    info.subagent = !meta_.parent_id.empty();
    info.resumed = transcript_.size() > 1;  // more than the system message: loaded or forked
  }
  if (deps_.hook_files) files = deps_.hook_files(workdir_);
  return std::make_unique<hooks::SessionHooks>(
      std::move(info), std::move(files),
      [this] {
        SessionMutexLock l(&mu_);
        return hooks::HookContext{hooks::PermissionModeName(settings_.policy), settings_.tool_env,
                                  workdir_};
      },
      [this](const std::string& text, bool failure) {
        SessionMutexLock l(&mu_);
        if (failure) {
          Emit(events::Error(text));
        } else {
          NoticeLocked(text);
        }
      });
}

hooks::PromptHooks Session::PromptHooks(const std::string& text) {
  hooks::PromptHooks hooked = hooks_->BeforePrompt(text);
  if (!hooked.context.empty()) {
    hooked.context = absl::StrCat("\n\n<hook-context>\n", hooked.context, "\n</hook-context>");
  }
  return hooked;
}

bool Session::ContinueAfterStop(int continued) {
  std::optional<std::string> reason = hooks_->OnStop(continued);
  if (!reason.has_value()) {
    hooks_->Notify("idle_prompt", kIdleMessage);
    return false;
  }
  SessionMutexLock l(&mu_);
  if (cancelled_ || shutting_down_) return false;
  // Nothing is pending after a turn the model ended, so a user message keeps the rule.
  if (!transcript_.AppendUser(absl::StrCat("[Stop hook] ", *reason)).ok()) return false;
  SaveLocked(Save::kTranscriptOnly);
  NoticeLocked(absl::StrCat("a Stop hook sent the model back to work: ", *reason));
  return true;
}

std::optional<tools::ToolOutcome> Session::BeforeTool(const llm::ToolCall& call, Json* args,
                                                      bool gated) {
  hooks::ToolGuard guard = hooks_->BeforeTool(call.name, *args, call.id);
  if (guard.updated_input.has_value() && guard.permission != hooks::Permission::kDeny) {
    for (auto& [k, v] : guard.updated_input->items()) (*args)[k] = v;
    SessionMutexLock l(&mu_);
    NoticeLocked(
        absl::StrCat("a PreToolUse hook changed the input of ", call.name, " (", call.id, ")"));
  }
  if (gated) return AuthorizeGuarded(call, *args, guard);
  // A call that is never asked about (read-only): a hook's ask or failure refuses it.
  if (guard.permission == hooks::Permission::kDeny || guard.permission == hooks::Permission::kAsk ||
      guard.failed) {
    CallVerdict v = hooks::ApplyGuard({}, guard, v1::POLICY_MODE_DENY_UNRULED, false);
    return tools::ToolOutcome{v.refusal, true, /*denied_by_policy=*/true};
  }
  return std::nullopt;
}

void Session::AfterTool(const llm::ToolCall& call, const Json& args, tools::ToolOutcome* outcome) {
  std::string note =
      hooks_->AfterTool(call.name, args, call.id, outcome->content, outcome->is_error);
  if (!note.empty()) absl::StrAppend(&outcome->content, "\n\n[PostToolUse hook]\n", note);
}

CallVerdict Session::PermissionHooks(const llm::ToolCall& call, const Json& args,
                                     bool protected_path) {
  using K = CallVerdict::Kind;
  if (protected_path) return {K::kAsk, ""};  // only a person may allow it
  hooks::ToolGuard guard = hooks_->OnPermissionRequest(call.name, args, call.id);
  if (guard.failed) return {K::kAsk, ""};
  switch (guard.permission) {
    case hooks::Permission::kAllow:
      return {K::kRun, ""};
    case hooks::Permission::kDeny:
      return hooks::ApplyGuard({}, guard, v1::POLICY_MODE_ASK, false);
    default:
      return {K::kAsk, ""};
  }
}

}  // namespace agent::daemon
