// SeenMark: how far one client (a session on one terminal) had followed a session when it
// left, so that a later attach from the same terminal can mark what happened meanwhile
// ("— while you were away —"). Kept in the state directory, one small file per session and
// terminal; a missing or damaged file is no mark, never an error. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace agent::client {

struct SeenMark {
  std::string epoch;     // the daemon's epoch of `seq`
  uint64_t seq = 0;      // the last event shown
  int64_t messages = 0;  // transcript messages shown then
};

// <state_dir>/seen/<session>@<terminal>, the terminal's name with '/' made '_' ("pts_3");
// an empty terminal (no TTY) is "none". Names are checked: a session id or terminal with
// anything but [A-Za-z0-9._-] after that gives "" (nothing is kept).
std::string SeenMarkPath(const std::string& state_dir, const std::string& session_id,
                         const std::string& terminal);

std::optional<SeenMark> LoadSeenMark(const std::string& path);
absl::Status SaveSeenMark(const std::string& path, const SeenMark& mark);

// Where a reattach draws the "while you were away" rule: before message `index` of a
// transcript of `messages` messages; nullopt when nothing was missed (or the mark is of a
// transcript since compacted, when the count no longer says where).
std::optional<int64_t> AwayRuleBefore(const std::optional<SeenMark>& mark, const std::string& epoch,
                                      uint64_t seq, int64_t messages);

}  // namespace agent::client
