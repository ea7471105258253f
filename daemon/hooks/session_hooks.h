// SessionHooks: the hooks of one session, fired by the session at each step of its turns
// (Claude Code's events and JSON contract, hook_decision.h). The session calls these without
// its lock held; each blocks while the event's hooks run (in parallel, each with its
// timeout), except Notify, which runs them on a thread of its own so a waiting approval is
// never delayed by a slow notifier. Every hook failure and systemMessage is reported through
// `report` (the session shows it to every attached client).
//
// Thread-safe: the batch threads of one reply may call BeforeTool/AfterTool at once.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/json.h"
#include "common/mutex.h"
#include "daemon/hooks/hook_decision.h"
#include "daemon/hooks/hook_loader.h"
#include "daemon/sandbox/sandbox.h"

namespace agent::daemon::hooks {

// What a session tells its hooks about itself, now.
struct HookContext {
  std::string permission_mode;   // "default", "acceptEdits", … (PermissionModeName)
  std::vector<std::string> env;  // the tools' environment ("NAME=value"); empty: minimal
  std::string cwd;               // where the hooks run (the project unless set)
};

// What the PreToolUse or PermissionRequest hooks say about one call.
struct ToolGuard {
  Permission permission = Permission::kNone;
  std::string reason;
  std::optional<Json> updated_input;
  // The allow came from the user's own hooks: a project's hook runs what the model can
  // rewrite, so its allow never stands in for a person who is not there.
  bool user_allow = false;
  // A hook failed (crashed, timed out, printed garbage) or the hooks could not be read: the
  // call must be a person's decision.
  bool failed = false;
  std::string failure;
};

struct PromptHooks {
  bool blocked = false;
  std::string reason;   // why it was blocked (for the person)
  std::string context;  // for the model, added to the prompt's message
};

class SessionHooks {
 public:
  struct Info {
    std::string session_id;
    std::string project;  // the session's workdir
    std::string transcript_path;
    bool subagent = false;  // a child session: SubagentStop instead of Stop
    bool resumed = false;   // SessionStart's source: "resume", else "startup"
    // Where a project's own hooks run: they are repository content, and the files they run
    // the model can rewrite, so they run confined like any command; without a sandbox that
    // confines (null, off, or unable to start) they do not run at all.
    std::shared_ptr<const sandbox::Sandbox> sandbox = nullptr;
  };
  using Report = std::function<void(const std::string& text, bool failure)>;
  using Context = std::function<HookContext()>;

  SessionHooks(Info info, HookFiles files, Context context, Report report);
  ~SessionHooks();  // waits for the Notification hooks still running
  SessionHooks(const SessionHooks&) = delete;
  SessionHooks& operator=(const SessionHooks&) = delete;

  // SessionStart (first prompt of this session's life in the daemon), then UserPromptSubmit.
  PromptHooks BeforePrompt(const std::string& prompt);
  // PreToolUse for one call.
  ToolGuard BeforeTool(const std::string& tool, const Json& input, const std::string& call_id);
  // PermissionRequest: the rules left the call to a person.
  ToolGuard OnPermissionRequest(const std::string& tool, const Json& input,
                                const std::string& call_id);
  // PostToolUse: a note for the model to add to the result, or empty.
  std::string AfterTool(const std::string& tool, const Json& input, const std::string& call_id,
                        const std::string& result, bool is_error);
  // Stop / SubagentStop when the model ended its turn: the reason to send it back to work, or
  // nullopt. `continued`: how often this turn was sent back already (bounded by the limit).
  std::optional<std::string> OnStop(int continued);
  // Notification, in the background: `type` is "permission_prompt" or "idle_prompt".
  void Notify(std::string type, std::string message);
  void PreCompact(bool manual);
  // SessionEnd, once, when SessionStart ran; waits for the Notification hooks first, and no
  // notification starts after it.
  void End(const std::string& reason);

  // The input every event gets: session_id, transcript_path, cwd, permission_mode,
  // hook_event_name.
  Json BaseInput(std::string_view event, const HookContext& ctx) const;

 private:
  // Runs the hooks of `event` whose matcher selects `subject` with `input`.
  HookOutcome Fire(std::string_view event, std::string_view subject, Json input,
                   const HookContext& ctx, bool* unreadable = nullptr);
  // Tells the people about the project's untrusted hooks when the set changed since told.
  void AnnounceUntrusted();
  // Once per session: a project hook was skipped because no sandbox confines it.
  void TellUnconfinable();
  ToolGuard Guard(std::string_view event, const std::string& tool, const Json& input,
                  const std::string& call_id);

  const Info info_;
  const HookFiles files_;
  const Context context_;
  const Report report_;
  agent::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> untrusted_told_ ABSL_GUARDED_BY(mu_);  // AnnounceUntrusted
  bool unconfinable_told_ ABSL_GUARDED_BY(mu_) = false;
  struct Notifier {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Notifier> notifiers_ ABSL_GUARDED_BY(mu_);
};

// Claude Code's name of one of our policy modes ("default", "bypassPermissions", "plan",
// "dontAsk"; auto mode, which Claude Code lacks, is "auto").
std::string PermissionModeName(int policy_mode);

}  // namespace agent::daemon::hooks
