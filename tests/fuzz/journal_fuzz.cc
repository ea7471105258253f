// Fuzzes replaying a session's journal (daemon/store/transcript_journal.h) over its transcript
// file: the input is the file's text, a NUL byte, then the journal's lines (its header is made for
// that file). For any bytes: a journal of another file is never replayed; what is replayed
// keeps the transcript rule, longer by exactly the records replayed; what is set aside is
// the journal's tail from a line on, with a reason, so nothing is replayed and dropped both.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/transcript.h"
#include "daemon/store/transcript_journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return 0;
  const std::string_view file = input.substr(0, nul);
  const std::string body(input.substr(nul + 1));
  auto base = agent::Transcript::FromFileText(file);
  if (!base.ok()) return 0;
  const std::string journal = agent::daemon::JournalHeader(file) + body;
  auto replayed = agent::daemon::ReplayJournal(file, *base, journal);
  // The header of another text (one byte more) is stale.
  if (agent::daemon::ReplayJournal(std::string(file) + " ", *base, journal).has_value()) {
    __builtin_trap();
  }
  if (!replayed.has_value()) return 0;
  if (replayed->messages < 0 || replayed->repeats < 0) __builtin_trap();
  if (replayed->set_aside.empty() != replayed->why.empty()) __builtin_trap();
  if (!replayed->set_aside.empty()) {
    const std::string_view tail = replayed->set_aside;
    if (tail.size() > body.size() ||
        body.compare(body.size() - tail.size(), tail.size(), tail) != 0) {
      __builtin_trap();
    }
    if (tail.size() < body.size() && body[body.size() - tail.size() - 1] != '\n') __builtin_trap();
  }
  if (replayed->messages == 0) return 0;
  auto after = agent::Transcript::FromFileText(replayed->file_text);
  if (!after.ok()) __builtin_trap();
  if (after->size() != base->size() + static_cast<size_t>(replayed->messages)) __builtin_trap();
  return 0;
}
