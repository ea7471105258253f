#include "daemon/store/transcript_journal.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json.h"

namespace agent::daemon {
namespace {

// A fingerprint of the file text, not a defence: only the daemon writes both files.
uint64_t Fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

constexpr std::string_view kFileEnd = "\n]\n";

}  // namespace

std::string JournalHeader(std::string_view file_text) {
  return absl::StrFormat("{\"journal\":1,\"extends_bytes\":%d,\"extends_fnv1a\":\"%016x\"}\n",
                         file_text.size(), Fnv1a(file_text));
}

std::optional<Replayed> ReplayJournal(std::string_view file_text, const Transcript& base,
                                      std::string_view journal) {
  const size_t header_end = journal.find('\n');
  if (header_end == std::string_view::npos) return std::nullopt;
  if (journal.substr(0, header_end + 1) != JournalHeader(file_text)) return std::nullopt;
  journal.remove_prefix(header_end + 1);
  Replayed out;
  TranscriptRule rule;
  for (const Json& m : base.messages()) (void)rule.Add(m);
  std::string_view previous;
  if (!base.serialized().empty()) previous = base.serialized().back();
  std::vector<std::string_view> lines;
  while (!journal.empty()) {
    const size_t nl = journal.find('\n');
    if (nl == std::string_view::npos) break;  // torn: the append did not finish
    const std::string_view line = journal.substr(0, nl);
    absl::StatusOr<Json> m = ParseJson(line);
    if (!m.ok() || !m->is_object()) {
      out.why = "a line that is not a JSON message";
      break;
    }
    if (std::vector<std::string> problems = rule.Check(*m); !problems.empty()) {
      if (line == previous) {
        ++out.repeats;
        journal.remove_prefix(nl + 1);
        continue;
      }
      out.why = absl::StrJoin(problems, "; ");
      break;
    }
    (void)rule.Add(*m);
    lines.push_back(line);
    previous = line;
    journal.remove_prefix(nl + 1);
  }
  if (!out.why.empty()) out.set_aside = std::string(journal);
  if (lines.empty() && out.repeats == 0 && out.set_aside.empty()) return std::nullopt;
  // "[\n  m1,\n  m2\n]\n" gains ",\n  j1,\n  j2" before its end; an empty list ("[\n]\n") gains
  // "\n  j1,\n  j2".
  if (file_text.size() < kFileEnd.size() ||
      file_text.substr(file_text.size() - kFileEnd.size()) != kFileEnd) {
    return std::nullopt;
  }
  const std::string_view head = file_text.substr(0, file_text.size() - kFileEnd.size());
  const size_t last = head.find_last_not_of(" \t\r\n");
  if (last == std::string_view::npos) return std::nullopt;
  const bool empty = head[last] == '[';
  out.file_text.reserve(file_text.size() + 4 * lines.size() + 4);
  out.file_text.append(head);
  for (size_t i = 0; i < lines.size(); ++i) {
    out.file_text += (i == 0 && empty) ? "\n  " : ",\n  ";
    out.file_text += lines[i];
  }
  out.file_text += kFileEnd;
  out.messages = static_cast<int>(lines.size());
  return out;
}

}  // namespace agent::daemon
