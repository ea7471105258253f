// Pieces every tool uses: the OpenAI function-schema envelope and turning a Status into what
// the model is told. Pure functions; thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

// {"type":"function","function":{"name","description","parameters":{"type":"object",
// "properties", "required", "additionalProperties":false}}}; "required" only when non-empty.
Json FunctionSchema(std::string_view name, std::string_view description, Json properties,
                    std::initializer_list<std::string_view> required);

// {"type": type, "description": description}; no description when it is empty.
Json Property(std::string_view type, std::string_view description = {});

// The status message, marked as an error. The model reads it and corrects its call.
// Made valid UTF-8 (it may name a file whose name is not).
ToolOutcome ErrorOutcome(const absl::Status& status);

// A successful result. `text` is made valid UTF-8 (invalid bytes become U+FFFD): file
// contents and names need not be, and everything that enters the transcript must.
ToolOutcome TextOutcome(std::string text);

}  // namespace agent::daemon::tools
