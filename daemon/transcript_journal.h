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

namespace agent::daemon {

// The first line (with its newline) of a journal that extends the transcript file `file_text`.
std::string JournalHeader(std::string_view file_text);

// `file_text` (TranscriptFileText's form) with the journal's messages appended, and how many
// there were. A torn or unparsable line ends the journal there (a crash during an append loses
// that message only). nullopt when the journal is empty, stale or not a journal.
struct Replayed {
  std::string file_text;
  int messages = 0;
};
std::optional<Replayed> ReplayJournal(std::string_view file_text, std::string_view journal);

}  // namespace agent::daemon
