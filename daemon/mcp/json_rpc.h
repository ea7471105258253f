// JSON-RPC 2.0 messages as MCP uses them: building requests, notifications and replies, and
// telling apart what a server sends. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/json.h"

namespace agent::daemon::mcp {

// Error codes of JSON-RPC 2.0 that a client sends back.
inline constexpr int kMethodNotFound = -32601;

Json MakeRequest(int64_t id, const std::string& method, Json params);
Json MakeNotification(const std::string& method, Json params);
Json MakeResult(const Json& id, Json result);
Json MakeError(const Json& id, int code, const std::string& message);

struct Incoming {
  enum class Kind { kRequest, kNotification, kResponse, kInvalid };
  Kind kind = Kind::kInvalid;
  Json id;                           // request or response id (null otherwise)
  std::string method;                // request or notification
  Json params;                       // request or notification; null when absent
  Json result;                       // response: the result, null on error
  std::optional<std::string> error;  // response: the error's code and message as text
  // response: why it is not a well-formed reply (neither or both of result and error, an
  // error that is not an object, an id that is not the integer we sent), or nullopt.
  std::optional<std::string> malformed;
};

// Classifies one message (an object). A message with an id (string or number) and no method
// is a kResponse, well-formed or not (`malformed`), so that the call it answers can end at
// once. Anything else that is neither a request nor a notification is kInvalid.
Incoming Classify(const Json& message);

// The id of our own request that `id` names: an integer as we sent it, or (for a reply that is
// malformed in this way) the same integer as a float or a decimal string; nullopt otherwise.
std::optional<int64_t> OwnRequestId(const Json& id);

}  // namespace agent::daemon::mcp
