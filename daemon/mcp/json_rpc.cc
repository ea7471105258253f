#include "daemon/mcp/json_rpc.h"

#include "absl/strings/str_cat.h"

namespace agent::daemon::mcp {

Json MakeRequest(int64_t id, const std::string& method, Json params) {
  Json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) j["params"] = std::move(params);
  return j;
}

Json MakeNotification(const std::string& method, Json params) {
  Json j = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) j["params"] = std::move(params);
  return j;
}

Json MakeResult(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json MakeError(const Json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

Incoming Classify(const Json& message) {
  Incoming in;
  if (!message.is_object()) return in;
  auto method = message.find("method");
  auto id = message.find("id");
  const bool has_id = id != message.end() && (id->is_string() || id->is_number_integer());
  if (method != message.end()) {
    if (!method->is_string()) return in;
    in.method = method->get<std::string>();
    if (auto p = message.find("params"); p != message.end()) in.params = *p;
    if (has_id) {
      in.kind = Incoming::Kind::kRequest;
      in.id = *id;
    } else if (id == message.end()) {
      in.kind = Incoming::Kind::kNotification;
    }
    return in;
  }
  if (!has_id) return in;
  in.id = *id;
  if (auto r = message.find("result"); r != message.end()) {
    in.kind = Incoming::Kind::kResponse;
    in.result = *r;
  } else if (auto e = message.find("error"); e != message.end()) {
    in.kind = Incoming::Kind::kResponse;
    in.error = absl::StrCat("error ", GetInt(*e, "code"), ": ", GetString(*e, "message", "(none)"));
  }
  return in;
}

std::optional<int64_t> OwnRequestId(const Json& id) {
  if (id.is_number_integer()) return id.get<int64_t>();
  return std::nullopt;
}

}  // namespace agent::daemon::mcp
