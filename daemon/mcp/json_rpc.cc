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
  if (id == message.end() || !(id->is_string() || id->is_number())) return in;
  in.kind = Incoming::Kind::kResponse;
  in.id = *id;
  auto r = message.find("result");
  auto e = message.find("error");
  const bool has_result = r != message.end(), has_error = e != message.end();
  if (has_result == has_error) {
    in.malformed = has_result ? "it has both \"result\" and \"error\""
                              : "it has neither \"result\" nor \"error\"";
  } else if (has_error && !e->is_object()) {
    in.malformed = "its \"error\" is not an object";
  } else if (!id->is_number_integer()) {
    in.malformed = absl::StrCat("its id ", DumpJson(*id), " is not the integer we sent");
  }
  if (has_result) in.result = *r;
  if (has_error && e->is_object()) {
    in.error = absl::StrCat("error ", GetInt(*e, "code"), ": ", GetString(*e, "message", "(none)"));
  }
  return in;
}

std::optional<int64_t> OwnRequestId(const Json& id) {
  if (id.is_number_integer()) return id.get<int64_t>();
  if (id.is_number_float()) {
    const double d = id.get<double>();
    // Our ids are small positive integers; only an exact one can name a call.
    if (d >= 1 && d < 9007199254740992.0 && d == static_cast<double>(static_cast<int64_t>(d))) {
      return static_cast<int64_t>(d);
    }
    return std::nullopt;
  }
  if (id.is_string()) {
    const std::string& s = id.get_ref<const std::string&>();
    if (s.empty() || s.size() > 18 || s.front() == '0') return std::nullopt;
    int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  }
  return std::nullopt;
}

}  // namespace agent::daemon::mcp
