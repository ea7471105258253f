// How an MCP server's tools look to the model: names `mcp__<server>__<tool>` made of what
// providers accept and cut to their limit deterministically, input schemas reduced to what
// they accept, and tools/call results turned into the text of a tool result. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"

namespace agent::daemon::mcp {

// OpenAI and Anthropic both accept ^[a-zA-Z0-9_-]{1,64}$ as a function name.
inline constexpr size_t kMaxToolNameBytes = 64;
// What a server's tool description or schema may cost in every request.
inline constexpr size_t kMaxDescriptionBytes = 2048;
inline constexpr size_t kMaxSchemaBytes = 32 << 10;

// A server name must be 1-32 of [A-Za-z0-9_-] without "__" (which separates the parts of a
// tool name, so `mcp__a__*` cannot also match the tools of a server named `a__b`);
// common/mcp_server_name.h, which `agent mcp add` checks too.
bool ValidServerName(std::string_view name);

// `mcp__<server>__<tool>` with every other character of the tool's name replaced by `_`. A
// name over kMaxToolNameBytes keeps its first bytes and ends with `_` and 8 hex digits of a
// hash of the full name, so the same tool always gets the same name and two long names that
// share a prefix stay apart.
std::string ModelToolName(std::string_view server, std::string_view tool);

// An object schema providers take: `type: object` with `properties`, without `$schema` and
// root-level combinators (OpenAI refuses oneOf/anyOf/allOf/not/enum at the root); a schema
// that is not an object, or over kMaxSchemaBytes, becomes "any object".
Json SanitizeSchema(const Json& schema);

// {"type":"function","function":{...}} as Tool::Schema returns it.
Json FunctionSchema(const std::string& name, const std::string& description, const Json& schema);

struct RenderedResult {
  std::string text;
  bool is_error = false;
};

// The text of a tools/call result: text content as is, images, audio and resources described
// in one line each (their bytes are not sent to the model), structuredContent as JSON when
// there is no text, isError kept. Not capped: the caller caps it.
RenderedResult RenderCallResult(const Json& result);

}  // namespace agent::daemon::mcp
