#include "client/link/proxy_protocol.h"

#include "common/json.h"

namespace agent::client {
namespace {

std::string Line(const Json& j) { return std::string(kProxyMagic) + DumpJson(j) + "\n"; }

absl::StatusOr<Json> Body(std::string_view line) {
  if (line.size() > kMaxProxyLine || line.substr(0, kProxyMagic.size()) != kProxyMagic) {
    return absl::InvalidArgumentError("not an agent-proxy line");
  }
  line.remove_prefix(kProxyMagic.size());
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  absl::StatusOr<Json> j = ParseJson(line);
  if (!j.ok() || !j->is_object()) return absl::InvalidArgumentError("a malformed agent-proxy line");
  return j;
}

Json Strings(const google::protobuf::RepeatedPtrField<std::string>& list) {
  Json a = Json::array();
  for (const std::string& s : list) a.push_back(s);
  return a;
}

void ReadStrings(const Json& obj, const char* key,
                 google::protobuf::RepeatedPtrField<std::string>* out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return;
  for (const Json& s : *it) {
    if (s.is_string()) out->Add(s.get<std::string>());
  }
}

}  // namespace

std::string EncodeProxyRequest(const ProxyRequest& r) {
  return Line(Json{{"autostart", r.autostart}, {"dir", r.dir}});
}

std::string EncodeProxyReply(const ProxyReply& r) {
  if (!r.status.ok()) {
    return Line(Json{{"code", static_cast<int>(r.status.code())},
                     {"error", std::string(r.status.message())}});
  }
  return Line(Json{{"root", r.project.root},
                   {"cwd", r.project.cwd},
                   {"home", r.home},
                   {"hostname", r.hostname},
                   {"env", Strings(r.tool_env.variables())},
                   {"env_keep", Strings(r.tool_env.keep())},
                   {"env_drop", Strings(r.tool_env.drop())}});
}

absl::StatusOr<ProxyRequest> DecodeProxyRequest(std::string_view line) {
  absl::StatusOr<Json> j = Body(line);
  if (!j.ok()) return j.status();
  ProxyRequest r;
  r.autostart = GetBool(*j, "autostart", true);
  r.dir = GetString(*j, "dir");
  return r;
}

absl::StatusOr<ProxyReply> DecodeProxyReply(std::string_view line) {
  absl::StatusOr<Json> j = Body(line);
  if (!j.ok()) return j.status();
  ProxyReply r;
  if (j->contains("error")) {
    int64_t code = GetInt(*j, "code", static_cast<int>(absl::StatusCode::kUnavailable));
    if (code <= 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
      code = static_cast<int>(absl::StatusCode::kUnknown);
    }
    r.status = absl::Status(static_cast<absl::StatusCode>(code), GetString(*j, "error"));
    return r;
  }
  r.project.root = GetString(*j, "root");
  r.project.cwd = GetString(*j, "cwd");
  r.home = GetString(*j, "home");
  r.hostname = GetString(*j, "hostname");
  if (r.project.root.empty() || r.project.root[0] != '/') {
    return absl::InvalidArgumentError("the agent-proxy reply names no project directory");
  }
  if (r.project.cwd.empty()) r.project.cwd = r.project.root;
  ReadStrings(*j, "env", r.tool_env.mutable_variables());
  ReadStrings(*j, "env_keep", r.tool_env.mutable_keep());
  ReadStrings(*j, "env_drop", r.tool_env.mutable_drop());
  return r;
}

}  // namespace agent::client
