#include "client/acp/mcp_servers.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace agent::client::acp {
namespace {

// [{name, value}] → {name: value}; `what` names the list in errors.
absl::StatusOr<Json> Pairs(const Json& list, const std::string& what) {
  Json out = Json::object();
  if (list.is_null()) return out;
  if (!list.is_array()) return absl::InvalidArgumentError(what + " must be a list");
  for (const Json& p : list) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("value") ||
        !p["value"].is_string()) {
      return absl::InvalidArgumentError(what + " entries are {\"name\", \"value\"} strings");
    }
    out[p["name"].get<std::string>()] = p["value"];
  }
  return out;
}

}  // namespace

absl::StatusOr<Json> EditorMcpServers(const Json& params) {
  Json out = Json::object();
  if (!params.is_object() || !params.contains("mcpServers") || params["mcpServers"].is_null()) {
    return out;
  }
  const Json& list = params["mcpServers"];
  if (!list.is_array()) return absl::InvalidArgumentError("mcpServers must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& s = list[i];
    const std::string where = absl::StrCat("mcpServers[", i, "]");
    if (!s.is_object()) return absl::InvalidArgumentError(where + " is not an object");
    const std::string name = GetString(s, "name");
    if (name.empty()) return absl::InvalidArgumentError(where + " has no name");
    if (out.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the name \"", name, "\" is given twice"));
    }
    const std::string type = GetString(s, "type");
    Json def = Json::object();
    if (type == "http") {
      def["url"] = GetString(s, "url");
      absl::StatusOr<Json> headers =
          Pairs(s.value("headers", Json()), absl::StrCat(where, ".headers"));
      if (!headers.ok()) return headers.status();
      def["headers"] = *std::move(headers);
    } else if (type.empty() || type == "stdio") {
      def["command"] = GetString(s, "command");
      def["args"] = s.value("args", Json::array());
      absl::StatusOr<Json> env = Pairs(s.value("env", Json()), absl::StrCat(where, ".env"));
      if (!env.ok()) return env.status();
      def["env"] = *std::move(env);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(where, " (", name, "): type \"", type,
                                                     "\" is not supported (stdio and http are)"));
    }
    out[name] = std::move(def);
  }
  return out;
}

}  // namespace agent::client::acp
