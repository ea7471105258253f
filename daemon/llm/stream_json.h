// Small readers shared by the stream assemblers (openai_stream, anthropic_stream,
// responses_stream) and the converters to other providers' requests: an event's JSON is
// model-server output, so every access tolerates a missing member or a value of the wrong
// type. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.h"

namespace agent::daemon::llm {

// `s` without leading and trailing spaces, tabs, CRs and LFs (an SSE `data` payload).
std::string_view TrimWhitespace(std::string_view s);

// `obj[key]` when `obj` is an object that has it, else null; no copy.
const Json* Member(const Json& obj, const char* key);

// The plain text of an OpenAI message's `content`: the string, or its text parts joined.
std::string ContentText(const Json& content);

// FNV-1a over `s`, continuing from `h` (start with 1469598103934665603): for ids generated the
// same way for any split of a stream.
uint64_t Fnv1a(uint64_t h, std::string_view s);

}  // namespace agent::daemon::llm
