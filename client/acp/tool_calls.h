// How a tool call of the daemon looks to an editor over ACP: its kind (read, edit, search,
// execute, ...), a one-line title, the files it touches, and for write_file / edit_file the
// change as ACP's diff content (old and new text). Built from the call's arguments, which
// are the model's (untrusted) JSON text: anything unreadable falls back to the bare name.
// Pure.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"

namespace agent::client::acp {

// ACP's ToolKind for one of our tools ("other" for MCP tools and the unknown).
std::string ToolKindOf(std::string_view tool);

// The fields of a `tool_call` (or ToolCallUpdate) for call `id` of `tool` with `arguments`
// (JSON text): toolCallId, title, kind, rawInput, locations (absolute, from `cwd`) and, for
// file writes, content with one diff.
Json ToolCallFields(std::string_view id, std::string_view tool, std::string_view arguments,
                    std::string_view cwd);

// `text` as ACP tool call content: [{"type":"content","content":{"type":"text",...}}],
// fenced as a code block (longer fence than any run of backticks in it) when `code`.
Json TextContent(std::string_view text, bool code);

}  // namespace agent::client::acp
