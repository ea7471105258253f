#include "client/acp/json_rpc.h"

namespace agent::client::acp {
namespace {

std::string Line(const Json& j) { return DumpJson(j) + "\n"; }

bool ValidId(const Json& id) { return id.is_string() || id.is_number_integer(); }

Message Invalid(int code, std::string problem, Json id = nullptr) {
  Message m;
  m.kind = Message::kInvalid;
  m.code = code;
  m.problem = std::move(problem);
  m.id = std::move(id);
  return m;
}

}  // namespace

std::vector<LineReader::Line> LineReader::Feed(std::string_view bytes) {
  std::vector<Line> out;
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    std::string_view piece = bytes.substr(0, nl);
    bytes = nl == std::string_view::npos ? std::string_view() : bytes.substr(nl + 1);
    if (!skipping_) partial_.append(piece);
    if (partial_.size() > max_) {  // refused once, then skipped to its end
      if (!skipping_) out.push_back(Line{"", true});
      skipping_ = true;
      partial_.clear();
    }
    if (nl == std::string_view::npos) break;
    if (!skipping_) {
      if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
      if (partial_.find_first_not_of(" \t") != std::string::npos) {
        out.push_back(Line{std::move(partial_), false});
      }
    }
    partial_.clear();
    skipping_ = false;
  }
  return out;
}

Message ParseMessage(std::string_view line) {
  absl::StatusOr<Json> parsed = ParseJson(line);
  if (!parsed.ok()) return Invalid(kParseError, "Parse error: the message is not valid JSON");
  Json& j = *parsed;
  if (j.is_array()) return Invalid(kInvalidRequest, "Invalid Request: batches are not used by ACP");
  if (!j.is_object()) return Invalid(kInvalidRequest, "Invalid Request: not a JSON object");
  Json id = j.contains("id") ? j["id"] : Json();
  if (j.contains("id") && !ValidId(id) && !id.is_null()) {
    return Invalid(kInvalidRequest, "Invalid Request: id must be a string or an integer");
  }
  if (GetString(j, "jsonrpc") != "2.0") {
    return Invalid(kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"", id);
  }
  Message m;
  m.id = id;
  if (!j.contains("method")) {
    if (!j.contains("id") || !(j.contains("result") || j.contains("error"))) {
      return Invalid(kInvalidRequest, "Invalid Request: no method, result or error", id);
    }
    m.kind = Message::kResponse;
    if (j.contains("result")) m.result = j["result"];
    if (j.contains("error")) m.error = j["error"];
    return m;
  }
  if (!j["method"].is_string()) {
    return Invalid(kInvalidRequest, "Invalid Request: method must be a string", id);
  }
  m.method = j["method"].get<std::string>();
  m.kind = j.contains("id") ? Message::kRequest : Message::kNotification;
  if (m.kind == Message::kRequest && !ValidId(id)) {
    return Invalid(kInvalidRequest, "Invalid Request: id must be a string or an integer");
  }
  if (j.contains("params") && !j["params"].is_null()) {
    if (!j["params"].is_object()) {
      return Invalid(kInvalidParams, "Invalid params: params must be an object", id);
    }
    m.params = j["params"];
  } else {
    m.params = Json::object();
  }
  return m;
}

std::string ResultLine(const Json& id, Json result) {
  return Line(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string ErrorLine(const Json& id, int code, std::string_view message, Json data) {
  Json error = {{"code", code}, {"message", std::string(message)}};
  if (!data.is_null()) error["data"] = std::move(data);
  return Line(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}});
}

std::string RequestLine(int64_t id, std::string_view method, Json params) {
  return Line(Json{{"jsonrpc", "2.0"},
                   {"id", id},
                   {"method", std::string(method)},
                   {"params", std::move(params)}});
}

std::string NotificationLine(std::string_view method, Json params) {
  return Line(
      Json{{"jsonrpc", "2.0"}, {"method", std::string(method)}, {"params", std::move(params)}});
}

}  // namespace agent::client::acp
