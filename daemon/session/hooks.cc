// A Session's hooks (daemon/hooks/): what they are told of the session. Its TurnRunner fires
// them for the prompt about to be taken (SessionStart, UserPromptSubmit) and at the end of a
// turn (Stop / SubagentStop); each tool call's hooks (PreToolUse, PermissionRequest,
// PostToolUse) are its CallGuard's (call_guard.h).
// The hooks run without the session's lock; what they decide enters the transcript under it,
// so every call still gets exactly one result, whatever a hook did.
#include "daemon/session/events.h"
#include "daemon/session/session.h"
#include "daemon/store/store.h"

namespace agent::daemon {
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
  info.sandbox = deps_.sandbox;
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

}  // namespace agent::daemon
