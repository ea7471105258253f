// RequestCache: a transcript's messages in the form a provider's request carries them, each
// message converted and serialised once and reused by every later request of the session.
// A step's request then costs what is new: the cache keeps the request's whole "messages"
// array as text it only appends to, and a request is a few views of that text (RequestBody)
// instead of a copy of it, a deep copy of the transcript, a second copy per message (the
// outgoing filter) and a re-serialisation of all of it.
//
// The cache is keyed by each message's own serialisation (Transcript::serialized() and its
// hashes(), kept by the transcript in step with every change): an entry is reused while the
// text at its index has the same hash, so appends convert one message, and a
// compaction, a refreshed system prompt or a truncation (fork) re-convert only the messages
// that changed (the text after the first change is laid out again, which copies it once).
// Switching provider or OpenAI options (for Responses, the model too) drops every entry.
//
// The text is exactly what BuildOpenAiRequest / BuildAnthropicRequest / BuildResponsesRequest
// would serialise (the tests compare byte for byte), so a request built from it is the same
// request. For Responses each message's input items are converted once, so the first N items of
// a step's request are the bytes of the previous step's.
//
// The text a body views is never written again: a truncation leaves it in place and later
// appends go after it, so a request may be sent on another thread while the next is prepared.
// Thread-compatible: the owning session calls Prepare under its mutex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/transcript.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/request_body.h"
#include "daemon/llm/request_builder.h"

namespace agent::daemon::llm {

struct PreparedMessages {
  Provider provider = Provider::kOpenAi;
  OpenAiRequestOptions options;
  // The request's "messages" (Responses: "input") array, JSON text.
  RequestBody messages = RequestBody("[]");
  std::string system;  // Anthropic: the top-level `system` text (empty: none)
  // Anthropic: the offsets in `messages` of the '{' of the blocks that carry a cache
  // breakpoint (BreakpointMessages' messages, each on its last block that may carry one).
  std::vector<size_t> breakpoints;
};

class RequestCache {
 public:
  // One cache follows one transcript as it changes (a session's); another transcript may be
  // passed, and is then compared message by message.
  PreparedMessages Prepare(const Transcript& transcript, Provider provider,
                           const OpenAiRequestOptions& options);
  size_t entries() const { return entries_.size(); }
  // Bytes the cache holds: its entries and the laid-out text (about the transcript's size).
  size_t bytes() const;

 private:
  enum class Role : uint8_t { kNone, kSystem, kUser, kAssistant, kItems };
  // What one message converts to, before it is laid out.
  struct Converted {
    Role role = Role::kNone;          // kNone: the message sends nothing
    bool same_as_source = false;      // OpenAI: the wire form is the serialisation itself
    std::string text;                 // the wire form, blocks, system text or input items
    size_t mark = std::string::npos;  // Anthropic: offset in `text` of the last markable block
  };
  struct Entry {
    Role role = Role::kNone;
    size_t text_begin = 0;  // where the entry's text is in messages_ (after its separator)
    size_t text_end = 0;
    size_t mark = std::string::npos;  // relative to the text, as Converted::mark
    std::string system;               // Anthropic: a system message's text
    // The layout before this entry, to cut back to it.
    size_t messages_before = 0;
    size_t groups_before = 0;
    size_t open_mark_before = std::string::npos;
    Role open_role_before = Role::kNone;
  };
  Converted Convert(const Json& message, const std::string& source) const;
  // Lays out entry `e`'s text after the current end of messages_.
  void LayOut(Entry* e, std::string_view text);
  // Text appended to messages_, in space no body views yet.
  void AppendText(std::string_view text);
  void Reset();
  // The entries from `k` on dropped, the layout cut back to where entry `k` began.
  void CutTo(size_t k);

  Provider provider_ = Provider::kOpenAi;
  OpenAiRequestOptions options_;
  std::vector<Entry> entries_;
  // Transcript::hashes() of the messages entries_ were made from (absl::Hash covers the
  // length too): apart, so that a step's check of every message is one pass over integers.
  std::vector<uint64_t> hashes_;
  // Transcript::identity() and rewrites() of the transcript the last Prepare read: while both
  // hold and the last message read is unchanged, the transcript was only appended to since.
  uint64_t seen_identity_ = 0;
  uint64_t seen_rewrites_ = 0;
  // The "messages" array's text without its closing (Anthropic: without the open message's
  // closing either), in arenas that are only ever appended to.
  RequestBody messages_;
  std::shared_ptr<std::string> arena_;  // the arena appended to; its reserved size never grows
  // Anthropic: the merged messages laid out so far, the last one's role and the offset in
  // messages_ of its markable block.
  std::vector<size_t> group_marks_;
  Role open_role_ = Role::kNone;
};

// The request body BuildWireRequest sends for `prepared`: byte for byte the body
// BuildOpenAiRequest / BuildAnthropicRequest / BuildResponsesRequest would give for the same
// messages (streaming), with `openai`'s prompt_cache_key (its other options are the prepared
// ones; Responses takes only the key) or `anthropic`'s breakpoints.
RequestBody PreparedBody(const PreparedMessages& prepared, const std::string& model,
                         const Json& tools, const OpenAiRequestOptions& openai,
                         const AnthropicCache& anthropic);

// The OpenAI-shaped messages a request carries (for tests and diagnostics): `messages`, or
// when the request was prepared, parsed back from its text.
Json RequestMessages(const ModelRequest& request);

}  // namespace agent::daemon::llm
