#include "client/input/completion.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "client/input/slash_commands.h"
#include "client/terminal/terminal_text.h"

namespace agent::client {
namespace {

constexpr size_t kMaxChoices = 8;
constexpr size_t kMaxDirEntries = 5000;

bool StartsWith(std::string_view s, std::string_view p) { return s.starts_with(p); }
bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// Names from the repository are untrusted: one with a control character (an escape
// sequence for the terminal) is never offered, inserted or shown.
bool HasControl(std::string_view s) { return HasTerminalControl(s); }

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }

std::string CommonPrefix(const std::vector<std::string>& v) {
  if (v.empty()) return "";
  std::string p = v[0];
  for (const std::string& s : v) {
    size_t n = 0;
    while (n < p.size() && n < s.size() && p[n] == s[n]) ++n;
    p.resize(n);
  }
  // Never end in the middle of a UTF-8 character.
  while (!p.empty() && (static_cast<unsigned char>(p.back()) & 0xC0) == 0x80) p.pop_back();
  if (!p.empty() && static_cast<unsigned char>(p.back()) >= 0xC0) p.pop_back();
  return p;
}

bool Boundary(std::string_view s, size_t i) {
  if (i == 0) return true;
  char c = s[i - 1];
  return c == '/' || c == '_' || c == '-' || c == '.' || c == ' ';
}

// Higher is better; nullopt when `q` (lower case) is not a subsequence of `path`.
std::optional<long> Score(std::string_view q, std::string_view path) {
  std::string lower = absl::AsciiStrToLower(std::string(path));
  size_t slash = lower.find_last_of('/', lower.size() > 1 ? lower.size() - 2 : 0);
  std::string_view base =
      std::string_view(lower).substr(slash == std::string::npos ? 0 : slash + 1);
  long score = -static_cast<long>(path.size());
  if (q.empty()) return score;
  if (StartsWith(base, q)) {
    score += 300;
  } else if (Contains(base, q)) {
    score += 200;
  } else if (Contains(lower, q)) {
    score += 100;
  }
  size_t i = 0, prev = std::string::npos;
  for (char c : q) {
    while (i < lower.size() && lower[i] != c) ++i;
    if (i == lower.size()) return std::nullopt;
    if (prev != std::string::npos && i == prev + 1) score += 5;
    if (Boundary(lower, i)) score += 8;
    prev = i++;
  }
  return score;
}

// " (what it does)" for a list of commands: one line, short, no control characters.
std::string Described(std::string_view description) {
  constexpr size_t kMax = 40;
  std::string d;
  for (char c : WithoutC1(description)) {
    unsigned char u = static_cast<unsigned char>(c);
    d += (u < 0x20 || u == 0x7F) ? ' ' : c;
  }
  d = std::string(absl::StripAsciiWhitespace(d));
  if (d.empty()) return "";
  if (d.size() > kMax) {
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(d[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    d = d.substr(0, cut) + "…";
  }
  return " (" + d + ")";
}

Completion Replace(std::string_view word, std::string insert) {
  return Completion{word.size(), std::move(insert), {}};
}

// `matches` share `typed` as a prefix: one completes (`end` after it), several extend to
// their common prefix or, when that adds nothing, are listed.
Completion Choose(std::string_view word, std::string_view lead, std::vector<std::string> matches,
                  const std::vector<std::string>& shown, const std::string& end_of) {
  if (matches.empty()) return {};
  if (matches.size() == 1) {
    std::string m = matches[0];
    return Replace(word, std::string(lead) + m + (m.empty() || m.back() == '/' ? "" : end_of));
  }
  std::string lcp = CommonPrefix(matches);
  if (lcp.size() + lead.size() > word.size()) return Replace(word, std::string(lead) + lcp);
  Completion c;
  c.choices = shown;
  return c;
}

Completion CompleteCommand(std::string_view word, const CompletionSources& src) {
  std::string typed = absl::AsciiStrToLower(std::string(word.substr(1)));
  std::vector<CommandCandidate> all = BuiltinCommands();
  for (CommandCandidate& c : all) c.description.clear();  // /help says what those do
  std::set<std::string> names;
  for (const CommandCandidate& c : all) names.insert(c.name);
  if (src.custom_commands) {
    for (CommandCandidate& c : src.custom_commands()) {
      // A project command never replaces a built-in of the same name.
      if (names.insert(c.name).second) all.push_back(std::move(c));
    }
  }
  std::vector<std::string> matches, shown;
  for (const CommandCandidate& c : all) {
    if (!StartsWith(absl::AsciiStrToLower(c.name), typed) || HasControl(c.name)) continue;
    matches.push_back(c.name);
    shown.push_back("/" + c.name + Described(c.description));
  }
  return Choose(word, "/", matches, shown, " ");
}

Completion CompleteMention(std::string_view word, const CompletionSources& src) {
  if (!src.project_files) return {};
  std::string q = absl::AsciiStrToLower(std::string(word.substr(1)));
  std::vector<std::string> matches = FuzzyMatch(q, src.project_files(), 1000);
  if (matches.empty()) return {};
  std::vector<std::string> shown(matches.begin(),
                                 matches.begin() + std::min(matches.size(), kMaxChoices));
  for (std::string& s : shown) s = "@" + s;
  if (matches.size() > kMaxChoices) shown.push_back("…");
  // Fuzzy matches only extend what was typed when they all begin with it.
  bool prefix = std::all_of(matches.begin(), matches.end(),
                            [&](const std::string& m) { return StartsWith(m, word.substr(1)); });
  if (matches.size() > 1 && !prefix) return Completion{0, "", shown};
  return Choose(word, "@", matches, shown, " ");
}

Completion CompletePath(std::string_view word, const CompletionSources& src) {
  size_t slash = word.find_last_of('/');
  std::string dir_part =
      slash == std::string_view::npos ? "" : std::string(word.substr(0, slash + 1));
  std::string base(slash == std::string_view::npos ? word : word.substr(slash + 1));
  std::string dir = dir_part.empty()     ? src.cwd
                    : dir_part[0] == '/' ? dir_part
                                         : src.cwd + "/" + dir_part;
  if (dir.empty()) dir = ".";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return {};
  std::vector<std::string> matches;
  size_t seen = 0;
  while (dirent* e = ::readdir(d)) {  // bounded by kMaxDirEntries
    if (++seen > kMaxDirEntries) break;
    std::string name = e->d_name;
    if (name == "." || name == ".." || !StartsWith(name, base) || HasControl(name)) continue;
    if (name[0] == '.' && (base.empty() || base[0] != '.')) continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
      DIR* sub = ::opendir((dir + "/" + name).c_str());
      is_dir = sub != nullptr;
      if (sub) ::closedir(sub);
    }
    matches.push_back(dir_part + name + (is_dir ? "/" : ""));
  }
  ::closedir(d);
  std::sort(matches.begin(), matches.end());
  std::vector<std::string> shown;
  for (size_t i = 0; i < matches.size() && i < 3 * kMaxChoices; ++i) shown.push_back(matches[i]);
  return Choose(word, "", matches, shown, " ");
}

}  // namespace

std::vector<CommandCandidate> BuiltinCommands() {
  std::vector<CommandCandidate> out;
  for (const auto& [name, what] : SlashCommandList()) out.push_back({name, what});
  return out;
}

std::vector<std::string> FuzzyMatch(std::string_view query, const std::vector<std::string>& paths,
                                    size_t limit) {
  std::string q = absl::AsciiStrToLower(std::string(query));
  std::set<std::string> dirs;
  for (const std::string& p : paths) {
    if (HasControl(p)) continue;
    for (size_t s = p.find('/'); s != std::string::npos; s = p.find('/', s + 1)) {
      dirs.insert(p.substr(0, s + 1));
    }
  }
  std::vector<std::pair<long, const std::string*>> scored;
  auto consider = [&](const std::string& p) {
    if (std::optional<long> s = Score(q, p)) scored.push_back({*s, &p});
  };
  for (const std::string& p : paths) {
    if (!HasControl(p)) consider(p);
  }
  for (const std::string& d : dirs) consider(d);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : *a.second < *b.second;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(*scored[i].second);
  return out;
}

Completion Complete(std::string_view before, const CompletionSources& src) {
  size_t start = before.size();
  while (start > 0 && !IsSpace(before[start - 1])) --start;
  std::string_view word = before.substr(start);
  if (start == 0 && !word.empty() && word[0] == '/' &&
      word.find('/', 1) == std::string_view::npos && !StartsWith(word, "//")) {
    return CompleteCommand(word, src);
  }
  if (!word.empty() && word[0] == '@') return CompleteMention(word, src);
  bool in_command = !before.empty() && before[0] == '/' && start > 0 && !StartsWith(before, "//");
  if (in_command) return CompletePath(word, src);
  return {};
}

}  // namespace agent::client
