// Conversion from our transcript (OpenAI chat messages) to an OpenAI Responses API request
// (POST /responses), for the Responses transport. Pure functions; thread-safe.
//
// Each transcript message becomes zero or more `input` items, in place, so a message's items
// are the same bytes in every request (request_cache.h relies on it):
// - system / developer → {"type":"message","role":<same>,"content":[input_text]} (kept in
//   place as an input item rather than `instructions`: the prefix stays one list);
// - user → a message of input_text / input_image parts; empty text is dropped, and so is a
//   message left with no part;
// - assistant → first its `openai_reasoning` items unchanged (the encrypted reasoning the
//   model returned with this message; it must come back before the message's other items),
//   then a message with one output_text part (its content, or its refusal when it has no
//   content), then one {"type":"function_call","call_id","name","arguments"} per tool call;
//   `reasoning_content`, `anthropic_thinking`, `refusal` and per-call extra fields are not sent;
// - tool → {"type":"function_call_output","call_id","output"} (text parts joined).
// The transcript rule (every call answered once) therefore gives every function_call exactly
// one function_call_output.
//
// Tools [{type:"function", function:{name, description, parameters}}] → [{"type":"function",
// "name", "description", "parameters", "strict": false}] (the Responses API defaults strict to
// true, which rejects ordinary schemas).
#pragma once

#include <string>

#include "common/json.h"

namespace agent::daemon::llm {

// The assistant-message field holding the Responses reasoning items (each as the model sent
// it, with its encrypted_content). Only the Responses transport sends it.
inline constexpr char kOpenAiReasoningField[] = "openai_reasoning";
// Beside it, the model that produced them: encrypted reasoning is only readable by that model
// (and a model without reasoning rejects reasoning items with a 400 on every later request),
// so after a model switch the items stay in the transcript but are no longer sent.
inline constexpr char kOpenAiReasoningModelField[] = "openai_reasoning_model";

struct ResponsesRequestOptions {
  // Sent as `prompt_cache_key` when not empty (the session id).
  std::string prompt_cache_key;
  // The model the request goes to; "" sends every reasoning item.
  std::string model;
};

// The `input` items one transcript message contributes (an array, maybe empty) to a request
// for `model` (reasoning items recorded for another model are left out).
Json ResponsesInputItems(const Json& message, const std::string& model = "");

// The Responses function tools for our OpenAI chat tool schemas.
Json ResponsesTools(const Json& openai_tools);

// {"include":["reasoning.encrypted_content"], "input", "model", "prompt_cache_key" (when set),
//  "store": false, "stream", "tools" (only when non-empty)}.
Json BuildResponsesRequest(const std::string& model, const Json& messages, const Json& tools,
                           bool stream, const ResponsesRequestOptions& options);

// The inverse of the conversion above, for tests and diagnostics: chat messages for Responses
// input items. Reasoning items go to the next assistant message's `openai_reasoning`;
// function_call items join the preceding assistant message's tool_calls (or start one).
Json ChatMessagesFromResponsesInput(const Json& items);

}  // namespace agent::daemon::llm
