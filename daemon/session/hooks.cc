// Where a Session fires its hooks (daemon/hooks/): the prompt about to be taken (SessionStart,
// UserPromptSubmit) and the end of a turn (Stop / SubagentStop); each tool call's hooks
// (PreToolUse, PermissionRequest, PostToolUse) are its CallGuard's (call_guard.h).
// The hooks run without the session's lock; what they decide enters the transcript under it,
// so every call still gets exactly one result, whatever a hook did.
#include "absl/strings/str_cat.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"
#include "daemon/store.h"

namespace agent::daemon {
namespace {

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

}  // namespace agent::daemon
