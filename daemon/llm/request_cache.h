// RequestCache: a transcript's messages in the form a provider's request carries them, each
// message converted and serialised once and reused by every later request of the session.
// A step's request then costs a copy of the text instead of a deep copy of the transcript, a
// second copy per message (the outgoing filter) and a re-serialisation of all of it.
//
// The cache is keyed by each message's own serialisation (Transcript::serialized(), kept by
// the transcript in step with every change): an entry is reused while the text at its index
// has the same size and hash, so appends convert one message, and a compaction, a refreshed
// system prompt or a truncation (fork) re-convert only the messages that changed. Switching
// provider or OpenAI options (for Responses, the model too) drops every entry.
//
// The text is exactly what BuildOpenAiRequest / BuildAnthropicRequest / BuildResponsesRequest
// would serialise (the tests compare byte for byte), so a request built from it is the same
// request. For Responses each message's input items are converted once, so the first N items of
// a step's request are the bytes of the previous step's.
// Thread-compatible: the owning session calls Prepare under its mutex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/request_builder.h"

namespace agent::daemon::llm {

struct PreparedMessages {
  Provider provider = Provider::kOpenAi;
  OpenAiRequestOptions options;
  std::string messages = "[]";  // the request's "messages" (Responses: "input") array, JSON text
  std::string system;           // Anthropic: the top-level `system` text (empty: none)
  // Anthropic: per message of `messages`, the offset in it of the '{' of the message's last
  // block that may carry a cache breakpoint (std::string::npos: none).
  std::vector<size_t> marks;
};

class RequestCache {
 public:
  // `messages` is the transcript (OpenAI shape), `serialized` DumpJson of each message, in
  // step with it (same size).
  PreparedMessages Prepare(const Json& messages, const std::vector<std::string>& serialized,
                           Provider provider, const OpenAiRequestOptions& options);
  size_t entries() const { return entries_.size(); }
  // Bytes held beyond the transcript's own text.
  size_t bytes() const;

 private:
  struct Entry {
    uint64_t hash = 0;
    size_t size = 0;
    bool same_as_source = false;  // OpenAI: the wire form is the serialisation itself
    // Anthropic: "user", "assistant", "system"; Responses: "items"; "": sends nothing
    std::string role;
    // The wire form (OpenAI), the blocks or system text (Anthropic), the comma-separated
    // input items (Responses).
    std::string text;
    size_t mark = std::string::npos;  // Anthropic: offset in `text` of the last markable block
  };
  Entry Convert(const Json& message, const std::string& source) const;
  void AppendOpenAi(const std::vector<std::string>& serialized, PreparedMessages* out) const;
  void AppendAnthropic(PreparedMessages* out) const;
  void AppendResponses(PreparedMessages* out) const;

  Provider provider_ = Provider::kOpenAi;
  OpenAiRequestOptions options_;
  std::vector<Entry> entries_;
};

// The request body BuildWireRequest sends for `prepared`: byte for byte the body
// BuildOpenAiRequest / BuildAnthropicRequest / BuildResponsesRequest would give for the same
// messages (streaming), with `openai`'s prompt_cache_key (its other options are the prepared
// ones; Responses takes only the key) or `anthropic`'s breakpoints.
std::string PreparedBody(const PreparedMessages& prepared, const std::string& model,
                         const Json& tools, const OpenAiRequestOptions& openai,
                         const AnthropicCache& anthropic);

// The OpenAI-shaped messages a request carries (for tests and diagnostics): `messages`, or
// when the request was prepared, parsed back from its text.
Json RequestMessages(const ModelRequest& request);

}  // namespace agent::daemon::llm
