// nlohmann/json behind functions that never throw: parse errors and type mismatches come back
// as absl::Status so they can cross module boundaries.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace agent {

using Json = nlohmann::json;

// Parses `text`; InvalidArgument names the byte (counted from 1) of the first error.
absl::StatusOr<Json> ParseJson(std::string_view text);

// Where and why `text` fails to parse as JSON.
struct JsonSyntaxError {
  size_t offset = 0;    // 0-based offset of the offending byte (at most text.size())
  std::string problem;  // the parser's description, e.g. "syntax error while parsing value …"
};

// The first syntax error in `text`, or nullopt when `text` is one valid JSON document. A
// second, event-only parse: call it after a parse has failed, to report where.
std::optional<JsonSyntaxError> FindJsonSyntaxError(std::string_view text);

// Serialises without throwing: invalid UTF-8 in strings is replaced, not fatal.
std::string DumpJson(const Json& j, int indent = -1);

// Field accessors that return a default when the field is absent or of another type.
std::string GetString(const Json& obj, std::string_view key, std::string_view fallback = "");
int64_t GetInt(const Json& obj, std::string_view key, int64_t fallback = 0);
bool GetBool(const Json& obj, std::string_view key, bool fallback = false);

}  // namespace agent
