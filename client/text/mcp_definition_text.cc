#include "client/text/mcp_definition_text.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/terminal/terminal_text.h"
#include "common/json.h"
#include "common/tool_env.h"

namespace agent::client {
namespace {

bool Plain(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("-_./=:,@+%").find(c) != std::string_view::npos;
}

// One word as a shell would need it quoted, made visible.
std::string Word(const std::string& word) {
  std::string v = Visible(word);
  if (!v.empty() && v == word && std::all_of(word.begin(), word.end(), Plain)) return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Cwd(const Json& d) {
  const std::string cwd = GetString(d, "cwd");
  const std::string project = GetString(d, "project");
  const bool in_project = GetString(d, "scope") == "project";
  if (!cwd.empty() && cwd.front() == '/') return Visible(cwd);
  if (cwd.empty()) return in_project ? Visible(project) + " (the project)" : "your home directory";
  return in_project ? Visible(project + "/" + cwd) : "~/" + Visible(cwd);
}

// An environment variable or header whose value is probably a credential.
bool LooksSecret(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(std::string(name));
  return NameLooksSecret(name) || lower == "authorization" || lower == "proxy-authorization" ||
         lower == "cookie" || absl::StrContains(lower, "auth");
}

void AppendPairs(const Json& d, const char* key, const std::string& label, const char* between,
                 bool full, std::vector<std::string>* out) {
  auto it = d.find(key);
  const bool none = it == d.end() || !it->is_object() || it->empty();
  if (none) {
    if (full) out->push_back(label + ": (none)");
    return;
  }
  for (const auto& [k, v] : it->items()) {
    // A listing may be on a shared screen or in a log; the approval shows every value.
    const bool hide = !full && LooksSecret(k);
    out->push_back(
        absl::StrCat(label, ": ", Visible(k), between,
                     hide ? "(hidden)" : Visible(v.is_string() ? v.get<std::string>() : v.dump())));
  }
}

}  // namespace

std::vector<std::string> DefinitionLines(std::string_view definition_json, bool full) {
  absl::StatusOr<Json> parsed = ParseJson(definition_json);
  if (!parsed.ok() || !parsed->is_object()) return {"(the daemon sent no definition)"};
  const Json& d = *parsed;
  std::vector<std::string> out;
  const std::string url = GetString(d, "url");
  if (!url.empty()) {
    out.push_back("url: " + Visible(url));
    AppendPairs(d, "headers", "header", ": ", full, &out);
    return out;
  }
  std::string line = "command: " + Word(GetString(d, "command"));
  if (auto a = d.find("args"); a != d.end() && a->is_array()) {
    for (const Json& w : *a)
      absl::StrAppend(&line, " ", Word(w.is_string() ? w.get<std::string>() : w.dump()));
  }
  out.push_back(std::move(line));
  if (full || !GetString(d, "cwd").empty()) out.push_back("cwd: " + Cwd(d));
  AppendPairs(d, "env", "env", "=", full, &out);
  return out;
}

}  // namespace agent::client
