// The provider a request goes to, chosen once from ModelSettings::provider (AGENT_PROVIDER or
// `provider` in config.json), and everything that differs between providers before the
// bytes go out: the URL, the body, the headers, and which StreamAssembler reads the answer.
// The transport (curl_model_client.cc) is the same for both. Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/request_body.h"
#include "daemon/llm/stream_assembler.h"

namespace agent::daemon::llm {

enum class Provider {
  kOpenAi,           // Chat Completions: POST <base_url>/chat/completions, Bearer key
  kAnthropic,        // Messages: POST <base_url>/messages, x-api-key and anthropic-version
  kOpenAiResponses,  // Responses: POST <base_url>/responses, Bearer key, stateless (store false)
};

// "openai" (and "", the default), "anthropic" or "openai-responses", in any case. Anything else is
// FailedPrecondition naming the accepted values: a typo must not silently speak the wrong
// protocol.
absl::StatusOr<Provider> ParseProvider(std::string_view setting);

// One request, ready for the wire.
struct WireRequest {
  Provider provider = Provider::kOpenAi;
  std::string url;
  RequestBody body;                  // the JSON body, with "stream": true
  std::vector<std::string> headers;  // "Name: value" lines, the key among them
  std::string model;                 // the model asked for
};

// The Anthropic request's max_tokens (the API requires one).
inline constexpr int kAnthropicMaxTokens = 8192;

// Checks the settings and builds the request. FailedPrecondition, with what to set, for: no
// base_url, no model, an unknown provider, a cache_ttl other than "", "5m" or "1h", no
// api_key for a cloud endpoint (api.openai.com, anthropic.com). Anthropic requests carry
// cache breakpoints (anthropic_convert.h) with the settings' TTL; OpenAI requests carry
// request.cache_key as prompt_cache_key (Responses requests too, with store false and the
// encrypted reasoning included: responses_convert.h). DeepSeek endpoints (a base_url containing
// "deepseek") get their reasoning_content back inside a tool loop (WIRE.md §8); other servers
// reject the field.
absl::StatusOr<WireRequest> BuildWireRequest(const ModelRequest& request);

// A fresh assembler for one answer of `provider`, holding at most `max_reply_bytes`. `sink` is
// borrowed, may be null, and must outlive the assembler. `model` (the model asked for) is
// recorded with Responses reasoning items, which only that model can read back.
std::unique_ptr<StreamAssembler> MakeStreamAssembler(Provider provider, StreamSink* sink,
                                                     size_t max_reply_bytes = kMaxReplyBytes,
                                                     const std::string& model = "");

}  // namespace agent::daemon::llm
