// ModelClient: one streamed chat request at a time, for one session. Implementations keep a
// connection alive between requests and retry what may be retried (reporting each retry to
// the sink), so callers see one call per model reply. Not thread-safe: the owning session
// calls Complete from its turn thread only; `cancelled` may be set from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/config.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/llm/stream_assembler.h"

namespace agent::daemon::llm {

struct PreparedMessages;  // request_cache.h

struct ModelRequest {
  ModelSettings settings;
  Json messages = Json::array();  // OpenAI shape, valid by the one rule
  Json tools = Json::array();     // OpenAI function schemas
  // When set, the messages already in wire form (a session's RequestCache): the body is built
  // from them and `messages` is not read.
  std::shared_ptr<const PreparedMessages> prepared;
  // Which prompt cache the request belongs to (the session id); "" for none.
  std::string cache_key;
  // The sending client's transport settings for this request; 0: the client's own
  // TransportOptions.
  int connect_timeout_ms = 0;
  int idle_timeout_ms = 0;
  int max_attempts = 0;
};

struct TransportOptions {
  int connect_timeout_ms = 10000;
  int idle_timeout_ms = 120000;  // no byte for this long: the request fails (or is retried)
  int max_attempts = 5;
  // Memory caps (see the constants' comments); over either, the request fails, unretried.
  size_t max_event_bytes = kMaxSseEventBytes;
  size_t max_reply_bytes = kMaxReplyBytes;
};

class ModelClient {
 public:
  virtual ~ModelClient() = default;
  // Streams one reply. Errors: Cancelled when `cancelled` turned true (returns within
  // 100 ms); Unavailable/ResourceExhausted after the retries gave up ("gave up after N
  // attempts: ..."); InvalidArgument/PermissionDenied/NotFound/Unauthenticated for request
  // errors the server rejected (its own message); DataLoss when a stream died after output
  // reached the sink (never retried); ResourceExhausted naming the cap when one SSE event or
  // the reply went over TransportOptions' caps (never retried).
  virtual absl::StatusOr<ModelReply> Complete(const ModelRequest& request, StreamSink* sink,
                                              const std::atomic<bool>* cancelled) = 0;
};

// The libcurl transport for OpenAI-compatible and Anthropic endpoints.
std::unique_ptr<ModelClient> MakeCurlModelClient(const TransportOptions& options);

}  // namespace agent::daemon::llm
