#include "client/session_table.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/session_client.h"
#include "client/terminal_text.h"
#include "common/json.h"
#include "common/utf8.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// Titles longer than this are cut: the row stays one line on most terminals.
constexpr int kTitleColumns = 60;

std::string Tokens(const v1::Usage& u) {
  int64_t n = u.prompt_tokens() + u.completion_tokens();
  if (n < 10000) return absl::StrCat(n);
  if (n < 10000000) return absl::StrCat(n / 1000, "k");
  return absl::StrCat(n / 1000000, "M");
}

std::vector<std::string> Row(const v1::Session& s, int64_t now_ms, const TableOptions& o) {
  std::vector<std::string> row = {s.id().substr(0, 16), StateName(s.state()),
                                  absl::StrCat(s.message_count()), Ago(s.updated_unix_ms(), now_ms),
                                  absl::StrCat(s.attached_clients())};
  if (!s.load_error().empty()) row[1] = "damaged";
  if (o.long_form) {
    row.push_back(Tokens(s.usage()));
    row.push_back(s.usage().cost_usd() > 0 ? absl::StrFormat("$%.2f", s.usage().cost_usd()) : "-");
  }
  if (o.all) row.push_back(PrintableLine(s.workdir()));
  row.push_back(FitColumns(PrintableLine(s.load_error().empty() ? s.title() : s.load_error()),
                           kTitleColumns));
  return row;
}

}  // namespace

std::string PrintableLine(const std::string& text) {
  std::string out = StripAnsi(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
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

std::string SessionTable(const std::vector<v1::Session>& sessions, int64_t now_ms,
                         const TableOptions& o) {
  std::vector<std::string> header = {"ID", "STATE", "MSGS", "UPDATED", "ATTACHED"};
  if (o.long_form) header.insert(header.end(), {"TOKENS", "COST"});
  if (o.all) header.push_back("PROJECT");
  header.push_back("TITLE");
  std::vector<std::vector<std::string>> rows = {header};
  for (const v1::Session& s : sessions) rows.push_back(Row(s, now_ms, o));
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
                {"requests", s.usage().requests()},
                {"cost_usd", s.usage().cost_usd()}}}};
    if (!s.cwd().empty()) j["cwd"] = s.cwd();
    if (!s.parent_id().empty()) j["parent_id"] = s.parent_id();
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
