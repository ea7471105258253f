// Fuzzes replaying a session's journal (daemon/transcript_journal.h) over its transcript file:
// the input is the file's text, a NUL byte, then the journal's lines (its header is made for
// that file). Any bytes either replay nothing or give a file that is still one JSON array,
// longer by exactly the messages replayed, each a JSON object; a journal of another file is
// never replayed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.h"
#include "daemon/transcript_journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return 0;
  const std::string_view file = input.substr(0, nul);
  const std::string body(input.substr(nul + 1));
  const std::string journal = agent::daemon::JournalHeader(file) + body;
  auto replayed = agent::daemon::ReplayJournal(file, journal);
  // The header of another text (one byte more) is stale.
  if (agent::daemon::ReplayJournal(std::string(file) + " ", journal).has_value()) __builtin_trap();
  if (!replayed.has_value()) return 0;
  if (replayed->messages <= 0) __builtin_trap();
  auto before = agent::ParseJson(file);
  auto after = agent::ParseJson(replayed->file_text);
  if (before.ok() && before->is_array()) {
    if (!after.ok() || !after->is_array()) __builtin_trap();
    if (after->size() != before->size() + static_cast<size_t>(replayed->messages)) __builtin_trap();
    for (size_t i = before->size(); i < after->size(); ++i) {
      if (!(*after)[i].is_object()) __builtin_trap();
    }
  }
  return 0;
}
