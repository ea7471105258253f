// What a model transport produces and whom it tells while it streams. Shared by the OpenAI and
// Anthropic transports, the stream assemblers and the turn loop. Plain data; no thread-safety
// of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace agent::daemon::llm {

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // raw JSON text as assembled; "{}" when the model sent none
  // Provider fields on the call that must be sent back unchanged (Gemini's extra_content).
  Json extra = Json::object();
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  // Part of prompt_tokens served from the provider's prompt cache (OpenAI
  // prompt_tokens_details.cached_tokens, Anthropic cache_read_input_tokens).
  int64_t cached_tokens = 0;
  // Part of prompt_tokens written to the prompt cache by this request (Anthropic
  // cache_creation_input_tokens, billed above the input price); 0 where the provider caches
  // for free (OpenAI).
  int64_t cache_write_tokens = 0;
};

// One assembled assistant reply.
struct ModelReply {
  std::string content;
  std::string reasoning;  // reasoning_content / reasoning / Anthropic thinking text
  std::string refusal;
  std::vector<ToolCall> tool_calls;
  // "stop", "tool_calls", "length", "content_filter", ... normalised: "stop" with calls
  // present becomes "tool_calls".
  std::string finish_reason;
  std::optional<Usage> usage;
  // Fields that must come back on the assistant message in the next request, such as
  // Anthropic thinking blocks with their signatures ({"thinking_blocks": [...]}).
  Json provider_fields = Json::object();

  // True when finish_reason is "length" and calls are present: the last call's arguments
  // may be cut, so the tool layer must answer it with an error instead of running it.
  bool LastCallTruncated() const { return finish_reason == "length" && !tool_calls.empty(); }
};

// Told about a reply as it streams. Called on the transport's thread.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void OnText(std::string_view text) = 0;
  virtual void OnReasoning(std::string_view text) = 0;
  // A new tool call slot got its name (and id when known).
  virtual void OnToolCallStarted(std::string_view id, std::string_view name) = 0;
  // The transport is about to wait and try again.
  virtual void OnRetry(int attempt, int max_attempts, int64_t delay_ms,
                       std::string_view reason) = 0;
};

}  // namespace agent::daemon::llm
