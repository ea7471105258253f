// The journal of a session's transcript: the messages appended since <id>.json was last written
// whole, one per line, so that saving a message costs the same at message 10 and at message
// 10,000 (DESIGN.md, "On disk"). <id>.json stays exactly the message list sent to the model; it
// is written whole at idle, at compaction and at shutdown, and each whole write starts a new
// journal whose first line names the file text it extends:
//   {"journal":1,"extends_bytes":N,"extends_fnv1a":"<16 hex digits>"}
// A crash between the whole write and the new journal leaves a journal that names an older
// text: it is stale (the file already holds its messages) and is ignored. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/transcript.h"

namespace agent::daemon {

// The first line (with its newline) of a journal that extends the transcript file `file_text`.
std::string JournalHeader(std::string_view file_text);

// `file_text` (TranscriptFileText's form), whose messages are `base`, with the journal's
// records appended. A torn last line ends the journal there (a crash during an append loses
// that message only). A record that repeats the one before it exactly and would break the rule
// where it stands is skipped (a write done twice). The first record that is not a message or
// breaks the rule ends the replay: it and every line after it are returned in `set_aside`,
// never dropped, with what it broke. nullopt when the journal is empty, stale or not a
// journal.
struct Replayed {
  std::string file_text;
  int messages = 0;       // records replayed
  int repeats = 0;        // records skipped as repeats
  std::string set_aside;  // the journal's lines from the first bad record on
  std::string why;        // what that record broke
};
std::optional<Replayed> ReplayJournal(std::string_view file_text, const Transcript& base,
                                      std::string_view journal);

}  // namespace agent::daemon
