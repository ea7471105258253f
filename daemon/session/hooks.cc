// A Session's hooks (daemon/hooks/): what they are told of the session. Its TurnRunner fires
// them for the prompt about to be taken (SessionStart, UserPromptSubmit) and at the end of a
// turn (Stop / SubagentStop); each tool call's hooks (PreToolUse, PermissionRequest,
// PostToolUse) are its CallGuard's (call_guard.h).
// The hooks run without the session's lock; what they decide enters the transcript under it,
// so every call still gets exactly one result, whatever a hook did.
#include "daemon/session/session.h"
#include "daemon/store/store.h"

namespace agent::daemon {
std::unique_ptr<hooks::SessionHooks> Session::MakeHooks() {
  hooks::SessionHooks::Info info;
  info.session_id = id();
  info.project = workdir();
  info.transcript_path = TranscriptPath(workdir(), id());
  info.subagent = state_.is_child();
  info.resumed = state_.resumed();
  info.sandbox = deps_.sandbox;
  hooks::HookFiles files;
  if (deps_.hook_files) files = deps_.hook_files(workdir());
  return std::make_unique<hooks::SessionHooks>(
      std::move(info), std::move(files), [this] { return state_.HookContext(); },
      [this](const std::string& text, bool failure) {
        if (failure) {
          state_.Error(text);
        } else {
          state_.Notice(text);
        }
      });
}

}  // namespace agent::daemon
