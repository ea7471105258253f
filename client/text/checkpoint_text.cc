#include "client/text/checkpoint_text.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/terminal/terminal_text.h"
#include "client/text/session_table.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr int kMaxTurns = 1000;
// How the daemon's note after a restore begins (daemon/session/checkpoints.cc, RestoreNote):
// a user message, but not a prompt anyone typed.
constexpr char kRestoreNote[] = "[The user restored the project's files";
constexpr int kPromptColumns = 70;

std::string Sgr(bool color, const char* code, const std::string& s) {
  return color ? absl::StrCat("\x1b[", code, "m", s, "\x1b[0m") : s;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The SGR code of a diff line, or nullptr for a context line.
const char* DiffLineCode(const std::string& line) {
  for (const char* h : {"diff ", "index ", "--- ", "+++ ", "new file mode", "deleted file mode",
                        "old mode", "new mode", "similarity", "rename ", "Binary files"}) {
    if (StartsWith(line, h)) return "1";
  }
  if (StartsWith(line, "@@")) return "36";
  if (StartsWith(line, "+")) return "32";
  if (StartsWith(line, "-")) return "31";
  return nullptr;
}

}  // namespace

std::string TerminalSafe(const std::string& text) {
  std::string stripped = StripAnsi(text);
  std::string out;
  out.reserve(stripped.size());
  for (char c : stripped) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) {
      out += '^';
      out += static_cast<char>(u == 0x7F ? '?' : u + '@');
    } else {
      out += c;
    }
  }
  return out;
}

std::string FileChangeList(const std::vector<v1::FileChange>& files, bool color) {
  std::string out;
  for (const v1::FileChange& f : files) {
    std::string change = PrintableLine(f.change());
    change.resize(std::max<size_t>(change.size(), 8), ' ');
    absl::StrAppend(&out, "  ", change, "  ", PrintableLine(f.path()));
    if (f.changed_since())
      absl::StrAppend(&out, "  ", Sgr(color, "33", "(changed since the turn)"));
    out += "\n";
  }
  return out;
}

int ChangedSince(const std::vector<v1::FileChange>& files) {
  return static_cast<int>(
      std::count_if(files.begin(), files.end(), [](const auto& f) { return f.changed_since(); }));
}

std::string TurnsPhrase(int turns) {
  return turns <= 1 ? "the last turn" : absl::StrCat("the last ", turns, " turns");
}

std::string ColoredDiff(const std::string& diff, bool color) {
  if (!color) return diff;
  std::string out;
  out.reserve(diff.size() + diff.size() / 8);
  std::vector<std::string> lines = absl::StrSplit(TerminalSafe(diff), '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (i + 1 == lines.size() && line.empty()) break;  // the diff's final newline
    const char* code = DiffLineCode(line);
    absl::StrAppend(&out, code == nullptr ? line : Sgr(true, code, line), "\n");
  }
  return out;
}

std::string StoreSizeLine(int64_t bytes) {
  std::string size;
  if (bytes < 1024) {
    size = absl::StrCat(bytes, " B");
  } else {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes) / 1024;
    size_t u = 0;
    for (; v >= 1024 && u + 1 < std::size(units); ++u) v /= 1024;
    size = absl::StrFormat("%.1f %s", v, units[u]);
  }
  return absl::StrCat("checkpoints: ", size, " on disk");
}

std::optional<int> ParseTurnCount(const std::string& arg) {
  std::string s(absl::StripAsciiWhitespace(arg));
  if (s.empty()) return 1;
  int n = 0;
  if (!absl::SimpleAtoi(s, &n) || n < 1 || n > kMaxTurns) return std::nullopt;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    return std::nullopt;  // "+3", " 3 ": SimpleAtoi takes them, a person did not mean them
  }
  return n;
}

std::vector<RewindPoint> RewindPoints(const std::vector<HistoryMessage>& history,
                                      const std::vector<v1::Checkpoint>& checkpoints) {
  std::vector<RewindPoint> out;
  for (size_t i = 0; i < history.size(); ++i) {
    if (history[i].role != "user" || history[i].content.rfind(kRestoreNote, 0) == 0) continue;
    RewindPoint p;
    p.at_message = static_cast<int>(i);
    std::string first = history[i].content.substr(0, history[i].content.find('\n'));
    p.prompt = FitColumns(PrintableLine(first), kPromptColumns);
    for (const v1::Checkpoint& c : checkpoints) {
      if (c.at_message() >= p.at_message && c.files_changed() > 0) ++p.files_turns;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string RewindList(const std::vector<RewindPoint>& points, bool color, size_t max_shown) {
  std::string out;
  const int width = static_cast<int>(absl::StrCat(points.size()).size());
  const size_t first = points.size() > max_shown ? points.size() - max_shown : 0;
  if (first > 0) {
    std::string which =
        first == 1 ? "prompt 1 is not shown; its number works too"
                   : absl::StrCat("prompts 1 to ", first, " are not shown; their numbers work too");
    absl::StrAppend(&out, "  ", Sgr(color, "2", "(" + which + ")"), "\n");
  }
  for (size_t i = first; i < points.size(); ++i) {
    std::string n = absl::StrCat(i + 1);
    n.insert(0, static_cast<size_t>(width) - n.size(), ' ');
    absl::StrAppend(&out, "  ", n, "  ", points[i].prompt);
    if (points[i].files_turns > 0) {
      absl::StrAppend(&out, "  ",
                      Sgr(color, "2",
                          absl::StrCat("(files: ", points[i].files_turns, " turn",
                                       points[i].files_turns == 1 ? "" : "s", " since)")));
    }
    out += "\n";
  }
  return out;
}

std::optional<int> ParseChoice(const std::string& answer, int count) {
  std::string s(absl::StripAsciiWhitespace(answer));
  int n = 0;
  if (s.empty() ||
      !std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); }) ||
      s.size() > 9 || !absl::SimpleAtoi(s, &n) || n < 1 || n > count) {
    return std::nullopt;
  }
  return n;
}

}  // namespace agent::client
