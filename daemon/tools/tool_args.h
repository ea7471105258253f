// Turns the model's `arguments` string into a JSON object and reads typed fields out of it,
// with errors worded for the model to fix its call. The readers coerce nothing: a call's
// arguments are checked and coerced once, against the tool's schema (tool_input.h), before
// anything reads them. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::daemon::tools {

// Empty, blank or `null` → {}. kInvalidArgument: "arguments are not valid JSON: <excerpt>" or
// "arguments must be a JSON object, got <type>". A JSON string that itself holds an object
// is unwrapped: some models encode the arguments twice.
absl::StatusOr<Json> ParseToolArguments(std::string_view raw);

// kInvalidArgument `<tool>: missing required argument "path"` or
// `<tool>: argument "path" must be a string, got number`. `tool` may be empty.
absl::StatusOr<std::string> RequireString(const Json& args, std::string_view field,
                                          std::string_view tool = {});
// nullopt when absent or null; an error when present with another type.
absl::StatusOr<std::optional<std::string>> OptionalString(const Json& args, std::string_view field,
                                                          std::string_view tool = {});
// JSON integers only.
absl::StatusOr<std::optional<int64_t>> OptionalInt(const Json& args, std::string_view field,
                                                   std::string_view tool = {});
// JSON booleans only.
absl::StatusOr<std::optional<bool>> OptionalBool(const Json& args, std::string_view field,
                                                 std::string_view tool = {});

}  // namespace agent::daemon::tools
