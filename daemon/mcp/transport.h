// A connection to one MCP server that carries JSON-RPC messages both ways: stdio (a child
// process) or Streamable HTTP. Messages from the server arrive on a thread of the transport.
//
// Contract: Start once; after it, on_message is called for every message the server sends, in
// order, from one thread at a time, and on_closed exactly once when the connection is gone
// (the server exited, sent something that is not JSON-RPC, or Close was called). Neither
// callback is called after Close returns. Send and Close are thread-safe; callbacks must not
// call Close (it waits for them).
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "common/json.h"

namespace agent::daemon::mcp {

// The largest message accepted from a server; a bigger one ends the connection.
inline constexpr size_t kMaxMessageBytes = size_t{32} << 20;

class Transport {
 public:
  struct Callbacks {
    std::function<void(Json message)> on_message;
    std::function<void(absl::Status why)> on_closed;
  };
  virtual ~Transport() = default;
  virtual absl::Status Start(Callbacks callbacks) = 0;
  virtual absl::Status Send(const Json& message) = 0;
  virtual void Close() = 0;
};

}  // namespace agent::daemon::mcp
