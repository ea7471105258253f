// Conversion between our transcript (OpenAI chat messages) and an Anthropic Messages API
// request, for the Anthropic transport. Pure functions; thread-safe.
//
// OpenAI → Anthropic (BuildAnthropicRequest):
// - every system (or developer) message's text goes to the top-level `system`, joined with
//   a blank line, wherever it stood (Anthropic has no system role in `messages`);
// - user text (a string, or text/image_url parts) → text/image blocks; empty text is
//   dropped (Anthropic rejects empty text blocks), and so is a message left with no block;
// - an assistant message becomes: its `anthropic_thinking` blocks first, unchanged (the
//   signatures must come back as they were), then its text, then one `tool_use` block per
//   tool call. `input` is the parsed `arguments` when they are a JSON object; otherwise
//   (cut by max_tokens, or not an object) `input` is {"_unparsed_arguments": <the raw
//   text>}, so the model sees what it wrote and the inverse restores the text exactly.
//   `reasoning_content`, `refusal` and per-call extra fields are not sent;
// - a run of `tool` messages → one user message of `tool_result` blocks (tool_use_id =
//   tool_call_id, content = the text; no content when empty);
// - consecutive messages of one role are merged into one message (Anthropic requires
//   alternation), so tool results and a following user message share one user message,
//   results first;
// - tools [{type:"function", function:{name, description, parameters}}] →
//   [{name, description, input_schema}] (input_schema {"type":"object"} when missing).
// Content is always sent as a block array.
//
// Prompt caching (AnthropicCache::breakpoints): Anthropic caches a prefix only up to a block
// marked with `cache_control`, at most four per request. We mark the last tool definition,
// the system prompt (then sent as one text block), the last block of the newest message
// (which writes the entry) and the last block of the message three from the end: the one the
// previous step's request ended with, so this request reads exactly the entry that one wrote
// however many blocks the step added (Anthropic's own look-back stops after 20 blocks).
// Thinking blocks are never marked (Anthropic rejects cache_control on them); a message
// whose last blocks are thinking has its last other block marked.
//
// Anthropic → OpenAI (OpenAiMessagesFromAnthropic) is the inverse: `system` → one system
// message; tool_result blocks → tool messages (before the user text of the same message);
// thinking/redacted_thinking → the assistant's `anthropic_thinking`; text → content (a
// string when the message has just text, else an array of parts); tool_use → tool_calls with
// compact-JSON arguments. OpenAI → Anthropic → OpenAI gives back the transcript, up to the
// merging of same-role neighbours, the spacing of arguments JSON and the dropped fields.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"

namespace agent::daemon::llm {

struct AnthropicCache {
  bool breakpoints = false;
  std::string ttl;  // "" (Anthropic's default, 5 minutes) or "1h"
};

// The `cache_control` value a breakpoint carries: {"type":"ephemeral"} plus "ttl" for "1h".
Json CacheControl(const AnthropicCache& cache);

// The body of POST /v1/messages. `stream` is sent as given; no breakpoints.
Json BuildAnthropicRequest(const std::string& model, const Json& openai_messages,
                           const Json& openai_tools, int max_tokens, bool stream);
Json BuildAnthropicRequest(const std::string& model, const Json& openai_messages,
                           const Json& openai_tools, int max_tokens, bool stream,
                           const AnthropicCache& cache);

// The top-level `system` for a breakpoint: [{"type":"text","text":system,"cache_control"}].
Json SystemBlocks(const std::string& system, const AnthropicCache& cache);

// The messages (indexes into an Anthropic `messages` array of `count`) whose last markable
// block gets a breakpoint: count-1 and count-3 when they exist, newest first.
std::vector<size_t> BreakpointMessages(size_t count);

// True for a block type that may carry cache_control (not thinking/redacted_thinking).
bool MarkableBlock(const Json& block);

// The OpenAI chat messages of an Anthropic request body (its `system` and `messages`).
Json OpenAiMessagesFromAnthropic(const Json& anthropic_request);

}  // namespace agent::daemon::llm
