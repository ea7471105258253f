// The one reading of a tool call's arguments. A call's arguments are checked against the
// tool's JSON schema once, before anything reads them; the policy, the hooks, the approval
// question and the tool then all read the value this returns, so no two of them can read one
// input two ways (`"escalate": "true"` is the boolean true for all of them, or for none).
// Pure functions; thread-safe.
//
// The schema subset read: `type` (a name or a list of names), `properties`, `required`,
// `enum`, `items` and `additionalProperties: false`; other keywords are ignored. The only
// coercions, made here and nowhere else: "true"/"false" where a boolean is wanted, a decimal
// string or an integral number where an integer is, a decimal string where a number is.
// A `null` property counts as absent. Properties the schema closes out
// (`additionalProperties: false`) are dropped: nothing can read what the schema does not name.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

// `args` checked against `parameters` (a JSON schema of an object). kInvalidArgument worded
// for the model: `bash: argument "escalate" must be a boolean, got string`.
absl::StatusOr<Json> CheckAgainstSchema(const Json& parameters, Json args, std::string_view tool);

// CheckAgainstSchema with `tool`'s own parameters (Schema()["function"]["parameters"]).
absl::StatusOr<Json> CheckToolInput(const Tool& tool, Json args);

}  // namespace agent::daemon::tools
