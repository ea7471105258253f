#include "client/view/seen_mark.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace agent::client {
namespace {

bool SafeName(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 128) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string SeenMarkPath(const std::string& state_dir, const std::string& session_id,
                         const std::string& terminal) {
  std::string term = terminal.empty() ? "none" : terminal;
  for (char& c : term) {
    if (c == '/') c = '_';
  }
  if (state_dir.empty() || !SafeName(session_id) || !SafeName(term)) return "";
  return absl::StrCat(state_dir, "/seen/", session_id, "@", term);
}

std::optional<SeenMark> LoadSeenMark(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  SeenMark m;
  if (!(in >> m.epoch >> m.seq >> m.messages) || m.messages < 0) return std::nullopt;
  return m;
}

absl::Status SaveSeenMark(const std::string& path, const SeenMark& mark) {
  if (path.empty()) return absl::OkStatus();
  if (!SafeName(mark.epoch)) return absl::InvalidArgumentError("bad epoch");
  return WriteFileAtomically(path,
                             absl::StrCat(mark.epoch, " ", mark.seq, " ", mark.messages, "\n"),
                             Durability::kUnsynced);
}

std::optional<int64_t> AwayRuleBefore(const std::optional<SeenMark>& mark, const std::string& epoch,
                                      uint64_t seq, int64_t messages) {
  if (!mark.has_value()) return std::nullopt;
  if (mark->epoch == epoch && mark->seq >= seq) return std::nullopt;  // nothing happened since
  if (mark->messages <= 0 || mark->messages >= messages) return std::nullopt;
  return mark->messages;
}

}  // namespace agent::client
