// What `agent ls` prints, and the age arguments of `agent rm --older-than`. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"

namespace agent::client {

struct TableOptions {
  bool all = false;  // a PROJECT column (--all lists every project)
  // --long: the session's usage before TITLE: IN, OUT, CACHED and WRITTEN (to the prompt
  // cache) tokens, REQS (requests), RETRIES and COST (Session.usage).
  bool long_form = false;
};

// "ID STATE MSGS UPDATED ATTACHED TITLE" and one aligned row per session; a damaged session
// shows its load error as the title. A child session (Session.depth, the `task` tool's) is
// listed right under its parent with its id indented ("└ id"), when its parent is listed. `now_ms`
// is the time ages are counted from. Titles and paths are made printable (no control characters
// reach the terminal).
// "running", "waiting" (for an approval) or "idle", as `agent ls` and /sessions show it.
const char* StateName(agent::v1::SessionState state);

std::string SessionTable(const std::vector<agent::v1::Session>& sessions, int64_t now_ms,
                         const TableOptions& options);

// Removes from `sessions` those one-shot runs made (`one_shots`, one_shot_runs.h) that nobody
// has used for a day (kOneShotKeptMs before `now_ms`), unless one is running or a client is
// attached, and their subagents; returns how many it removed.
inline constexpr int64_t kOneShotKeptMs = 24 * 3600 * 1000LL;
int DropOldOneShots(std::vector<agent::v1::Session>& sessions,
                    const std::set<std::string>& one_shots, int64_t now_ms);

// A JSON array, one object per session; integers are JSON numbers and times milliseconds
// since the epoch.
std::string SessionsJson(const std::vector<agent::v1::Session>& sessions);

// One line of printable text: escapes go, other control characters (a title is the user's
// first prompt, a path comes from the file system) become spaces.
std::string PrintableLine(const std::string& text);

// `text` cut to at most `columns` display columns, ending in "…" when cut.
std::string FitColumns(const std::string& text, int columns);

// "42s ago", "5m ago", "3h ago", "2d ago".
std::string Ago(int64_t unix_ms, int64_t now_ms);

// "30d", "12h", "90m", "45s" as milliseconds; nullopt for anything else (no unit, a
// negative or absurd number).
std::optional<int64_t> ParseAge(const std::string& text);

}  // namespace agent::client
