// The text of the checkpoint commands (/undo, /rewind, /diff, `agent undo`, `agent diff`):
// the list of files an undo restores, a diff coloured for the terminal, the prompts a rewind
// can go back to, and what a typed answer means. Pure. Paths, diffs and prompts come from
// the project and the model: everything shown on a terminal has its control characters made
// harmless here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"
#include "client/text/history.h"

namespace agent::client {

// `text` safe to write to a terminal: escape sequences removed, other control characters
// (but newlines and tabs) shown as "^X".
std::string TerminalSafe(const std::string& text);

// The files an undo restores, one a line ("  modified  src/a.cc"), the ones changed after
// the turn marked "(changed since the turn)". Yellow marks with `color`.
std::string FileChangeList(const std::vector<agent::v1::FileChange>& files, bool color);

// How many of `files` were changed after the turn.
int ChangedSince(const std::vector<agent::v1::FileChange>& files);

// "the last turn", "the last 3 turns".
std::string TurnsPhrase(int turns);

// A unified diff for the terminal: with `color` file headers bold, added lines green,
// removed lines red, hunk headers cyan, and control characters made harmless; without it
// the diff exactly as given (so that it can be piped to `git apply`).
std::string ColoredDiff(const std::string& diff, bool color);

// "checkpoints: 1.5 MiB on disk" for `agent daemon status` (B, KiB, MiB, GiB).
std::string StoreSizeLine(int64_t bytes);

// "/undo", "/undo 3": the number of turns (1 when empty); nullopt when `arg` is not a whole
// number from 1 to 1000.
std::optional<int> ParseTurnCount(const std::string& arg);

// A prompt of the session that /rewind can go back to: the conversation is forked just
// before it (`at_message`, its index in the transcript).
struct RewindPoint {
  int at_message = 0;
  std::string prompt;   // its first line, cut
  int files_turns = 0;  // checkpointed turns at or after it: what restoring undoes
};

// The user messages of `history` (but the daemon's notes that files were restored), oldest
// first, with the checkpoints that follow each.
std::vector<RewindPoint> RewindPoints(const std::vector<HistoryMessage>& history,
                                      const std::vector<agent::v1::Checkpoint>& checkpoints);

// The numbered list /rewind shows ("  1  fix the bug  (files: 2 turns since)"): the last
// `max_shown` points, after a line saying how many earlier ones are left out.
std::string RewindList(const std::vector<RewindPoint>& points, bool color, size_t max_shown = 40);

// The number typed to pick one of `count` points (1-based); nullopt when it is not one.
std::optional<int> ParseChoice(const std::string& answer, int count);

}  // namespace agent::client
