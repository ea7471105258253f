#include "daemon/mcp/server_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "common/file_stamp.h"
#include "common/mcp_server_name.h"
#include "common/paths.h"
#include "daemon/mcp/tool_shape.h"

namespace agent::daemon::mcp {
namespace {

bool Plain(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("-_./=:,@+%").find(c) != std::string_view::npos;
}

std::string Quote(const std::string& word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), Plain)) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

absl::Status StringMap(const Json& def, const char* key,
                       std::vector<std::pair<std::string, std::string>>* out) {
  auto it = def.find(key);
  if (it == def.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object())
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" is not an object"));
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\".", k, " is not a string"));
    }
    out->emplace_back(k, v.get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status StringList(const Json& def, const char* key, std::vector<std::string>* out,
                        bool* given = nullptr) {
  auto it = def.find(key);
  if (it == def.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" is not an array"));
  }
  for (const Json& w : *it) {
    if (!w.is_string() || w.get<std::string>().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", key, "\" holds something that is not a tool name"));
    }
    out->push_back(w.get<std::string>());
  }
  if (given != nullptr) *given = true;
  return absl::OkStatus();
}

// `*` matches any run of characters, everything else itself. Greedy with one backtrack point
// (the last star): O(pattern × name) however many stars a repository's settings hold.
bool NameMatches(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::StatusOr<ServerDef> ParseOne(const std::string& name, const Json& def) {
  if (!ValidServerName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the name must be ", std::string(kMcpServerNameRule)));
  }
  if (!def.is_object()) return absl::InvalidArgumentError("not an object");
  ServerDef s;
  s.name = name;
  s.command = GetString(def, "command");
  s.url = GetString(def, "url");
  if (s.command.empty() == s.url.empty()) {
    return absl::InvalidArgumentError("needs either \"command\" (stdio) or \"url\" (http)");
  }
  if (!s.url.empty() && !ValidMcpServerUrl(s.url)) {
    return absl::InvalidArgumentError("\"url\" must start with http:// or https://");
  }
  if (auto a = def.find("args"); a != def.end() && !a->is_null()) {
    if (!a->is_array()) return absl::InvalidArgumentError("\"args\" is not an array");
    for (const Json& w : *a) {
      if (!w.is_string()) return absl::InvalidArgumentError("\"args\" holds a non-string");
      s.args.push_back(w.get<std::string>());
    }
  }
  if (auto st = StringMap(def, "env", &s.env); !st.ok()) return st;
  if (auto st = StringMap(def, "headers", &s.headers); !st.ok()) return st;
  if (auto st = StringList(def, "enabled_tools", &s.enabled_tools, &s.has_enabled_tools);
      !st.ok()) {
    return st;
  }
  if (auto st = StringList(def, "disabled_tools", &s.disabled_tools); !st.ok()) return st;
  s.cwd = GetString(def, "cwd");
  const std::string start = GetString(def, "start", "lazy");
  if (start != "lazy" && start != "eager") {
    return absl::InvalidArgumentError("\"start\" must be \"lazy\" or \"eager\"");
  }
  s.eager = start == "eager";
  if (auto n = def.find("network"); n != def.end()) {
    if (!n->is_boolean()) return absl::InvalidArgumentError("\"network\" must be true or false");
    s.network = n->get<bool>();
  }
  s.timeout_ms =
      static_cast<int>(std::clamp<int64_t>(GetInt(def, "timeout_ms", 120000), 100, 3600000));
  s.startup_timeout_ms =
      static_cast<int>(std::clamp<int64_t>(GetInt(def, "startup_timeout_ms", 30000), 100, 600000));
  return s;
}

ParsedServers FromText(const absl::StatusOr<std::string>& text, const std::string& scope,
                       const std::string& project, const std::string& path) {
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return {};
    return {{}, {absl::StrCat(path, ": ", text.status().message())}};
  }
  absl::StatusOr<Json> j = ParseJson(*text);
  if (!j.ok()) return {{}, {absl::StrCat(path, ": ", j.status().message())}};
  return ParseServers(*j, scope, project, path);
}

}  // namespace

bool ServerDef::Offers(std::string_view tool) const {
  auto matches = [tool](const std::string& p) { return NameMatches(p, tool); };
  if (has_enabled_tools && std::none_of(enabled_tools.begin(), enabled_tools.end(), matches)) {
    return false;
  }
  return std::none_of(disabled_tools.begin(), disabled_tools.end(), matches);
}

std::string ServerDef::Target() const {
  if (is_http()) return url;
  std::string out = Quote(command);
  for (const std::string& a : args) absl::StrAppend(&out, " ", Quote(a));
  return out;
}

std::string ServerDef::Identity() const {
  Json j = {{"name", name}, {"scope", scope}, {"project", project}, {"command", command},
            {"args", args}, {"cwd", cwd},     {"url", url}};
  Json env_j = Json::object(), headers_j = Json::object();
  for (const auto& [k, v] : env) env_j[k] = v;
  for (const auto& [k, v] : headers) headers_j[k] = v;
  j["env"] = env_j;
  j["headers"] = headers_j;
  if (network) j["network"] = true;  // absent when false: earlier approvals stay valid
  if (!session.empty()) j["session"] = session;
  return DumpJson(j);  // nlohmann sorts keys: canonical
}

ParsedServers ParseServers(const Json& settings, const std::string& scope,
                           const std::string& project, const std::string& source) {
  ParsedServers out;
  if (!settings.is_object()) return out;
  auto it = settings.find("mcp_servers");
  if (it == settings.end() || it->is_null()) return out;
  if (!it->is_object()) {
    out.problems.push_back(absl::StrCat(source, ": \"mcp_servers\" is not an object"));
    return out;
  }
  for (const auto& [name, def] : it->items()) {
    absl::StatusOr<ServerDef> s = ParseOne(name, def);
    if (!s.ok()) {
      out.problems.push_back(absl::StrCat(name, " (", source, "): ", s.status().message()));
      continue;
    }
    s->scope = scope;
    s->project = project;
    out.servers.push_back(std::move(*s));
  }
  return out;
}

// Every step asks for the servers (Registry::ToolsFor): the files are read again only when
// they changed.
ParsedServers LoadUserServers() {
  static auto* read = new ReadOnChangeByKey<ParsedServers>;  // outlives exit: threads may read
  const std::string path = ConfigDir() + "/config.json";
  return read->Get(path, {path},
                   [&] { return FromText(ReadFileToString(path), "user", "", path); });
}

ParsedServers LoadProjectServers(const std::string& project) {
  static auto* read = new ReadOnChangeByKey<ParsedServers>;  // outlives exit: threads may read
  const std::string path = ProjectSettingsPath(project);
  return read->Get(project, {path}, [&]() -> ParsedServers {
    absl::StatusOr<DirFd> root = DirFd::Open(project, false);
    if (!root.ok()) return {};
    absl::StatusOr<DirFd> dir = root->OpenSubdir(".agent", false);
    if (!dir.ok()) {
      if (absl::IsNotFound(dir.status())) return {};
      return {{}, {std::string(dir.status().message())}};
    }
    return FromText(ReadFileToString(*dir, "settings.json"), "project", project, path);
  });
}

ParsedServers ServersFor(const std::string& project) {
  ParsedServers all;
  ParsedServers user = LoadUserServers();
  ParsedServers mine = LoadProjectServers(project);
  all.problems = std::move(user.problems);
  // Your rules name your servers (`mcp__github__*`): no other server may take a name, or one a
  // person would take for it (`GH`, `github_`), and with it what those rules allow.
  auto add = [&](ServerDef s, const std::string& source) {
    auto same = std::find_if(all.servers.begin(), all.servers.end(), [&](const ServerDef& u) {
      return McpServerNameKey(u.name) == McpServerNameKey(s.name);
    });
    if (same == all.servers.end()) {
      all.servers.push_back(std::move(s));
    } else if (same->name == s.name && same->scope != s.scope) {
      all.problems.push_back(absl::StrCat(
          source, " defines the MCP server \"", s.name,
          "\", which is the name of one of yours; yours is used (rename the project's)"));
    } else {
      all.problems.push_back(
          absl::StrCat(source, " defines the MCP server \"", s.name, "\", which differs from \"",
                       same->name, "\" only by case or trailing punctuation; refused (rename it)"));
    }
  };
  const std::string user_source = ConfigDir() + "/config.json";
  for (ServerDef& s : user.servers) add(std::move(s), user_source);
  for (ServerDef& s : mine.servers) add(std::move(s), ProjectSettingsPath(project));
  all.problems.insert(all.problems.end(), mine.problems.begin(), mine.problems.end());
  return all;
}

}  // namespace agent::daemon::mcp
