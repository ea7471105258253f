// The hooks a person configured, in Claude Code's shape, so a hook can be copied across:
//   "hooks": {"PreToolUse": [{"matcher": "bash|Edit", "hooks": [{"type": "command",
//             "command": "…", "timeout": 30}]}], …}
// under `hooks` in the user's config.json and in the project's .agent/settings.json. A matcher
// is a regular expression (RE2, whole name) over our tool names; Claude Code's tool names
// (Bash, Edit, Write, Read, Glob, Grep, LS, Task, TodoWrite, MultiEdit) match as aliases of
// ours. Empty or "*" matches everything. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::daemon::hooks {

// The events, with Claude Code's names (what `hook_event_name` carries).
inline constexpr std::string_view kSessionStart = "SessionStart";
inline constexpr std::string_view kUserPromptSubmit = "UserPromptSubmit";
inline constexpr std::string_view kPreToolUse = "PreToolUse";
inline constexpr std::string_view kPermissionRequest = "PermissionRequest";
inline constexpr std::string_view kPostToolUse = "PostToolUse";
inline constexpr std::string_view kNotification = "Notification";
inline constexpr std::string_view kStop = "Stop";
inline constexpr std::string_view kSubagentStop = "SubagentStop";
inline constexpr std::string_view kPreCompact = "PreCompact";
inline constexpr std::string_view kSessionEnd = "SessionEnd";

// Whether `event` is one of the events above.
bool IsKnownEvent(std::string_view event);

// Bounds on a hook's timeout (seconds): Claude Code's default is 60.
inline constexpr int kDefaultTimeoutS = 60;
inline constexpr int kMaxTimeoutS = 600;

enum class HookOrigin { kUser, kProject };

// One command of one matcher group of one event.
struct HookCommand {
  std::string event;
  std::string matcher;  // as written; empty matches everything
  std::string command;
  int timeout_s = kDefaultTimeoutS;
  HookOrigin origin = HookOrigin::kUser;
  // What a person trusts for a project hook: the event, matcher, command and timeout. Any
  // change makes it another key, so a changed hook is untrusted again.
  std::string TrustKey() const;
  // How `agent trust` lists it, "hook <event> [<matcher>] (<timeout> s): <command>": every
  // part of the key, so the text names exactly one hook and is what a person trusts.
  std::string Display() const;
};

// What every Display() starts with: tells a hook apart from an allow rule in `agent trust`.
inline constexpr std::string_view kHookDisplayPrefix = "hook ";

// The commands of a `hooks` object. Unknown events and non-"command" types are skipped (a
// hook written for a newer Claude Code must not stop the others); a malformed shape or a
// matcher that is not a valid expression is InvalidArgument naming `where` and the place.
absl::StatusOr<std::vector<HookCommand>> ParseHooks(const Json& hooks, HookOrigin origin,
                                                    std::string_view where);

// Claude Code's name for one of our tools ("bash" → "Bash"), or empty.
std::string_view ClaudeToolName(std::string_view tool);

// Whether `matcher` selects `subject` (a tool name, or per event the source, trigger or
// notification type). For tools, Claude Code's name of the tool is tried too.
bool MatcherSelects(std::string_view matcher, std::string_view subject);

}  // namespace agent::daemon::hooks
