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
};

// Classifies one message (an object). Anything else is kInvalid.
Incoming Classify(const Json& message);

// The id of our own requests as sent (integers only), or nullopt for an id we never use.
std::optional<int64_t> OwnRequestId(const Json& id);

}  // namespace agent::daemon::mcp
