#include "client/text/session_table.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/terminal/show_controls.h"
#include "client/terminal/terminal_text.h"
#include "client/text/child_view.h"
#include "client/text/json_events.h"
#include "common/json.h"
#include "common/utf8.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// Titles longer than this are cut: the row stays one line on most terminals.
constexpr int kTitleColumns = 60;

// A count in at most 5 columns: 9999, 12k, 3M.
std::string Compact(int64_t n) {
  if (n < 10000) return absl::StrCat(n);
  if (n < 10000000) return absl::StrCat(n / 1000, "k");
  return absl::StrCat(n / 1000000, "M");
}

// Nesting shown at most this deep; deeper children line up with the last level.
constexpr int kMaxIndent = 4;

std::vector<std::string> Row(const v1::Session& s, int level, int64_t now_ms,
                             const TableOptions& o) {
  std::string id = s.id().substr(0, 16);
  if (level > 0) id = std::string(2 * (std::min(level, kMaxIndent) - 1), ' ') + "└ " + id;
  std::vector<std::string> row = {id, StateName(s.state()), absl::StrCat(s.message_count()),
                                  Ago(s.updated_unix_ms(), now_ms),
                                  absl::StrCat(s.attached_clients())};
  if (!s.load_error().empty()) row[1] = "damaged";
  if (o.long_form) {
    const v1::Usage& u = s.usage();
    for (int64_t n :
         std::initializer_list<int64_t>{u.prompt_tokens(), u.completion_tokens(), u.cached_tokens(),
                                        u.cache_write_tokens(), u.requests(), u.retries()}) {
      row.push_back(Compact(n));
    }
    row.push_back(u.cost_usd() > 0 ? absl::StrFormat("$%.2f", u.cost_usd()) : "-");
  }
  if (o.all) row.push_back(PrintableLine(s.workdir()));
  row.push_back(FitColumns(PrintableLine(s.load_error().empty() ? s.title() : s.load_error()),
                           kTitleColumns));
  return row;
}

struct Placed {
  const v1::Session* session;
  int level;
};

// Each session once, children right under their parent (in the order given). A child whose
// parent is not listed stands alone; ids that loop (damaged files) are listed flat at the end.
std::vector<Placed> Tree(const std::vector<v1::Session>& sessions) {
  std::set<std::string> ids;
  for (const v1::Session& s : sessions) ids.insert(s.id());
  std::map<std::string, std::vector<const v1::Session*>> children;
  std::vector<const v1::Session*> roots;
  for (const v1::Session& s : sessions) {
    bool nested = IsChildSession(s) && s.parent_id() != s.id() && ids.count(s.parent_id()) > 0;
    if (nested) {
      children[s.parent_id()].push_back(&s);
    } else {
      roots.push_back(&s);
    }
  }
  std::vector<Placed> out;
  std::set<const v1::Session*> placed;
  // Depth first with an explicit stack: bounded by the sessions, each placed once.
  for (const v1::Session* root : roots) {
    std::vector<Placed> stack = {{root, 0}};
    while (!stack.empty()) {
      Placed p = stack.back();
      stack.pop_back();
      if (!placed.insert(p.session).second) continue;
      out.push_back(p);
      auto it = children.find(p.session->id());
      if (it == children.end()) continue;
      for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) {
        stack.push_back({*c, p.level + 1});
      }
    }
  }
  for (const v1::Session& s : sessions) {
    if (placed.insert(&s).second) out.push_back({&s, 0});
  }
  return out;
}

}  // namespace

// Newlines and tabs become spaces; every other character a terminal could act on or hide
// (escapes, bidi overrides) is shown as an escape, never applied or silently dropped: a title
// is the user's first prompt, a path comes from the file system or the repository.
std::string PrintableLine(const std::string& text) {
  std::string out = ShowControls(text);
  for (char& c : out) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  return out;
}

std::string FitColumns(const std::string& text, int columns) {
  if (DisplayWidth(text) <= columns) return text;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    Utf8Unit u = Utf8UnitAt(text, i);
    std::string piece = text.substr(i, u.len);
    if (DisplayWidth(out + piece) > columns - 1) break;
    out += piece;
    i += u.len;
  }
  return out + "…";
}

std::string Ago(int64_t unix_ms, int64_t now_ms) {
  int64_t s = std::max<int64_t>(0, (now_ms - unix_ms) / 1000);
  if (s < 60) return absl::StrCat(s, "s ago");
  if (s < 3600) return absl::StrCat(s / 60, "m ago");
  if (s < 86400) return absl::StrCat(s / 3600, "h ago");
  return absl::StrCat(s / 86400, "d ago");
}

const char* StateName(v1::SessionState s) {
  switch (s) {
    case v1::SESSION_STATE_RUNNING:
      return "running";
    case v1::SESSION_STATE_WAITING_APPROVAL:
      return "waiting";
    default:
      return "idle";
  }
}

std::string SessionTable(const std::vector<v1::Session>& sessions, int64_t now_ms,
                         const TableOptions& o) {
  std::vector<std::string> header = {"ID", "STATE", "MSGS", "UPDATED", "ATTACHED"};
  if (o.long_form)
    header.insert(header.end(), {"IN", "OUT", "CACHED", "WRITTEN", "REQS", "RETRIES", "COST"});
  if (o.all) header.push_back("PROJECT");
  header.push_back("TITLE");
  std::vector<std::vector<std::string>> rows = {header};
  for (const Placed& p : Tree(sessions)) rows.push_back(Row(*p.session, p.level, now_ms, o));
  std::vector<int> width(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], DisplayWidth(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - DisplayWidth(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

int DropOldOneShots(std::vector<v1::Session>& sessions, const std::set<std::string>& one_shots,
                    int64_t now_ms) {
  const size_t before = sessions.size();
  std::set<std::string> dropped;
  auto idle = [](const v1::Session& s) {
    return s.attached_clients() == 0 &&
           (s.state() == v1::SESSION_STATE_IDLE || s.state() == v1::SESSION_STATE_UNSPECIFIED);
  };
  for (const v1::Session& s : sessions) {
    if (one_shots.count(s.id()) > 0 && s.updated_unix_ms() < now_ms - kOneShotKeptMs && idle(s)) {
      dropped.insert(s.id());
    }
  }
  // Their subagents go with them (children nest a few levels; bounded anyway).
  for (int level = 0; level < 16; ++level) {
    size_t n = dropped.size();
    for (const v1::Session& s : sessions) {
      if (!s.parent_id().empty() && dropped.count(s.parent_id()) > 0 && idle(s)) {
        dropped.insert(s.id());
      }
    }
    if (dropped.size() == n) break;
  }
  std::erase_if(sessions, [&](const v1::Session& s) { return dropped.count(s.id()) > 0; });
  return static_cast<int>(before - sessions.size());
}

std::string SessionsJson(const std::vector<v1::Session>& sessions) {
  Json list = Json::array();
  for (const v1::Session& s : sessions) {
    Json j = {{"id", s.id()},
              {"workdir", s.workdir()},
              {"title", s.title()},
              {"model", s.model()},
              {"state", s.load_error().empty() ? StateName(s.state()) : "damaged"},
              {"messages", s.message_count()},
              {"attached_clients", s.attached_clients()},
              {"created_unix_ms", s.created_unix_ms()},
              {"updated_unix_ms", s.updated_unix_ms()},
              {"usage",
               {{"prompt_tokens", s.usage().prompt_tokens()},
                {"completion_tokens", s.usage().completion_tokens()},
                {"cached_tokens", s.usage().cached_tokens()},
                {"cache_write_tokens", s.usage().cache_write_tokens()},
                {"requests", s.usage().requests()},
                {"retries", s.usage().retries()},
                {"cost_usd", RoundedCost(s.usage().cost_usd())}}}};
    if (!s.cwd().empty()) j["cwd"] = s.cwd();
    if (!s.parent_id().empty()) j["parent_id"] = s.parent_id();
    if (!s.agent().empty()) j["agent"] = s.agent();
    if (s.depth() > 0) j["depth"] = s.depth();
    if (!s.load_error().empty()) j["load_error"] = s.load_error();
    list.push_back(std::move(j));
  }
  return DumpJson(list) + "\n";
}

std::optional<int64_t> ParseAge(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  int64_t unit_ms = 0;
  switch (text.back()) {
    case 's':
      unit_ms = 1000;
      break;
    case 'm':
      unit_ms = 60 * 1000;
      break;
    case 'h':
      unit_ms = 3600 * 1000;
      break;
    case 'd':
      unit_ms = 86400 * 1000;
      break;
    default:
      return std::nullopt;
  }
  int64_t n = 0;
  std::string digits = text.substr(0, text.size() - 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  // Up to ~100 years in seconds: no overflow in milliseconds.
  if (!absl::SimpleAtoi(digits, &n) || n > int64_t{3'200'000'000}) return std::nullopt;
  return n * unit_ms;
}

}  // namespace agent::client
