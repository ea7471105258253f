// Subagents: the `task` tool and the children it runs. A `task` call creates a child session
// (same project and cwd, parent_id, agent and depth set, saved and listed like any session,
// attachable), runs one turn in it to the end (ChildRunner) and answers the call with the
// child's final answer (FormatTaskResult). Calls of one reply run concurrently (the tool is
// Concurrent, so ToolDispatch batches them and keeps call order), at most `max_concurrent`
// children per parent at a time; the rest wait for a slot.
//
// Policy: a child inherits the parent's mode and model settings when it is made, and the
// project's rules (the same files); its agent definition can narrow its tools, never widen
// them. Only sessions above `max_depth` get the `task` tool: a top-level session when
// max_depth >= 1, a child only when its definition lists `task` and its depth allows.
//
// Wiring: the daemon's SessionDeps::tools_for passes each step's tools through ToolsFor,
// which finds the session's depth and agent through the SessionDirectory (the daemon's
// SessionManager, set once with set_sessions before any turn runs). Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/json.h"
#include "common/mutex.h"
#include "daemon/subagents/session_directory.h"
#include "daemon/tools/tool.h"
#include "daemon/tools/tool_registry.h"

namespace agent::daemon::subagents {

struct SubagentOptions {
  int max_concurrent = 4;       // config "subagent_max_concurrent"
  int max_depth = 1;            // config "subagent_max_depth"
  std::string user_agents_dir;  // empty: UserAgentsDir()
};

class Subagents {
 public:
  explicit Subagents(SubagentOptions options);
  void set_sessions(SessionDirectory* sessions) { manager_ = sessions; }

  // The tools of one step of session `session_id` in `workdir`, from the daemon's `base`.
  std::shared_ptr<const tools::ToolRegistry> ToolsFor(
      std::shared_ptr<const tools::ToolRegistry> base, const std::string& workdir,
      const std::string& session_id);

  // One `task` call of session `parent_id` (the tool's Run).
  tools::ToolOutcome RunTask(const std::string& parent_id, const Json& args,
                             const tools::ToolContext& ctx);

 private:
  // Waits for a free slot of `parent_id`; false when `cancelled` was set first.
  bool AcquireSlot(const std::string& parent_id, const std::atomic<bool>* cancelled)
      ABSL_LOCKS_EXCLUDED(mu_);
  void ReleaseSlot(const std::string& parent_id) ABSL_LOCKS_EXCLUDED(mu_);
  std::string UserDir() const;

  const SubagentOptions options_;
  SessionDirectory* manager_ = nullptr;
  agent::Mutex mu_;
  agent::CondVar slot_freed_;
  std::map<std::string, int> running_ ABSL_GUARDED_BY(mu_);  // children per parent
};

}  // namespace agent::daemon::subagents
