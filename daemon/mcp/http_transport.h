// The Streamable HTTP transport (MCP 2025-03-26 and later): every message we send is a POST of
// one JSON-RPC message to the server's URL with `Accept: application/json, text/event-stream`;
// the answer to a request is either one JSON body or an SSE stream (llm/sse_parser.h) carrying
// the answer and whatever notifications (progress) come before it. The Mcp-Session-Id the
// server gives in its answer to initialize is sent with every later POST, and so is the
// MCP-Protocol-Version negotiated there (taken only from the reply to initialize, never from
// another answer). No redirects are followed (headers may hold tokens).
//
// Each request's POST runs on a thread of its own, so a long call does not hold up others. A
// POST that ends without the answer to its request answers it with a JSON-RPC error (so no
// call waits for its timeout); a 404 once a session exists (the server forgot it) ends the
// connection, so the server is started over.
//
// Not done: the optional GET stream for messages the server starts on its own (so
// tools/list_changed arrives only on a POST's stream), resumption with Last-Event-ID, and
// DELETE of the session on close.
//
// Thread-safety: see transport.h.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "daemon/mcp/transport.h"

namespace agent::daemon::mcp {

struct HttpExchange;

struct HttpOptions {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string log_name;
  long connect_timeout_ms = 10000;
  size_t max_message_bytes = kMaxMessageBytes;
};

class HttpTransport : public Transport {
 public:
  explicit HttpTransport(HttpOptions options);
  ~HttpTransport() override;

  absl::Status Start(Callbacks callbacks) override;
  absl::Status Send(const Json& message) override;
  void Close() override;

 private:
  struct Outcome {
    int code = 0;  // CURLcode
    long status = 0;
    std::string error;
  };
  // One POST, to its end or Close.
  Outcome Perform(const Json& message, HttpExchange* x);
  // One message's POST and what its answer holds. A request whose POST ends without its
  // reply (an error status, a body that is neither JSON nor an event stream, a stream that
  // ends early or carries an event that is not JSON-RPC) is answered with a JSON-RPC error at
  // once.
  void Post(Json message);
  // Takes the protocol version for later headers from the reply to initialize.
  void AdoptProtocolVersion(const Json& reply) ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers one message from the server (serialised: one at a time).
  void Deliver(Json message) ABSL_LOCKS_EXCLUDED(deliver_mu_);
  void EndConnection(absl::Status why) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> HeaderLines() ABSL_LOCKS_EXCLUDED(mu_);

  HttpOptions options_;
  Mutex deliver_mu_;
  Callbacks callbacks_ ABSL_GUARDED_BY(deliver_mu_);
  std::atomic<bool> closing_{false};
  Mutex mu_;
  std::string session_id_ ABSL_GUARDED_BY(mu_);
  std::string protocol_version_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  struct PostThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<PostThread> posts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon::mcp
