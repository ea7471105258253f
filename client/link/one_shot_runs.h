// Which sessions one-shot runs (`agent "prompt"`) made, so that `agent ls` can leave the old
// ones out: their ids, one a line, in $XDG_STATE_HOME/agent/one-shot-sessions, appended by
// the run that made the session. Kept to the newest kMaxOneShotIds. Best effort: a file that
// cannot be read or written only means such sessions are listed. Not thread-safe.
#pragma once

#include <cstddef>
#include <set>
#include <string>

namespace agent::client {

inline constexpr size_t kMaxOneShotIds = 5000;

// `StateDir()/one-shot-sessions`.
std::string OneShotRunsPath();

// Records that a one-shot run made session `id`.
void RememberOneShot(const std::string& path, const std::string& id);

// The ids recorded.
std::set<std::string> OneShotSessions(const std::string& path);

}  // namespace agent::client
