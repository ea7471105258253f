// Request bodies for OpenAI-compatible Chat Completions, and the assistant message that a
// ModelReply becomes in the transcript. Pure functions; thread-safe.
//
// Our transcript keeps fields on assistant messages that some providers reject when they
// come back (WIRE.md §8), so BuildOpenAiRequest removes them from outgoing messages:
// - `anthropic_thinking` (Anthropic thinking blocks; only the Anthropic transport sends them)
//   is always dropped, and so are `openai_reasoning` and `openai_reasoning_model` (Responses
//   reasoning items and their model; only the Responses transport sends them);
// - `reasoning_content` is dropped unless Options::send_reasoning_content (DeepSeek's
//   reasoner answers 400 to it, its newer thinking models in a tool loop require it);
// - `refusal` is dropped too, because strict servers reject unknown message fields; when
//   the message has no other content its refusal text becomes the content, so the message
//   still says what the model said.
// The transcript itself is never changed; these are copies.
#pragma once

#include <string>

#include "common/config.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"

namespace agent::daemon::llm {

struct OpenAiRequestOptions {
  bool send_reasoning_content = false;
  // Sent as `prompt_cache_key` when not empty (the session id), so the provider routes a
  // session's requests to the same prompt cache. Servers that do not know it ignore it.
  std::string prompt_cache_key;
  // Responses only (request_cache.h): the model the request goes to, which decides which
  // reasoning items are sent (responses_convert.h).
  std::string model;
};

// {"model", "messages", "stream", "tools" (only when `tools` is a non-empty array),
//  "stream_options": {"include_usage": true} (only when streaming),
//  "prompt_cache_key" (only when set)}.
// `messages` is the transcript (a JSON array in the OpenAI chat shape).
Json BuildOpenAiRequest(const std::string& model, const Json& messages, const Json& tools,
                        bool stream);
Json BuildOpenAiRequest(const std::string& model, const Json& messages, const Json& tools,
                        bool stream, const OpenAiRequestOptions& options);

// The transcript message for `reply`: {"role":"assistant", "content": string (null when
// empty and tool calls are present), "tool_calls": [{"id", "type":"function",
// "function":{"name","arguments"}} plus each call's `extra` fields] (only when present),
// "reasoning_content" and "refusal" (only when non-empty)}, with reply.provider_fields
// merged in as top-level fields (never replacing role, content or tool_calls).
Json AssistantMessageFromReply(const ModelReply& reply);

// One transcript message as BuildOpenAiRequest sends it (the fields above removed).
Json OutgoingOpenAiMessage(const Json& message, const OpenAiRequestOptions& options);

// The options for a model endpoint: DeepSeek (a base_url containing "deepseek") gets its
// reasoning_content back inside a tool loop (WIRE.md §8).
OpenAiRequestOptions OpenAiOptionsFor(const ModelSettings& settings);

}  // namespace agent::daemon::llm
