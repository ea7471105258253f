// Fuzzes the one reading of a call's arguments (daemon/tools/tool_input.h): whatever the model
// sends to any core tool, the checked value either is refused with a message or holds every
// property the schema declares with exactly its declared type, so the tool's strict readers
// and the policy (which reads `bash` through ReadBashRequest, and `path` only as a string)
// see the same call. A value they could read two ways (`"escalate": "true"`) traps here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/tools/bash_request.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_input.h"
#include "daemon/tools/tool_registry.h"

namespace {

using agent::Json;
namespace tools = agent::daemon::tools;

bool HasType(const Json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tools::ToolRegistry registry = tools::ToolRegistry::CreateCore();
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Json> parsed = tools::ParseToolArguments(raw);
  if (!parsed.ok()) return 0;
  for (std::string_view name : registry.Names()) {
    const tools::Tool& tool = *registry.Find(name);
    absl::StatusOr<Json> checked = tools::CheckToolInput(tool, *parsed);
    if (!checked.ok()) {
      if (checked.status().message().empty()) __builtin_trap();  // say what is wrong
      continue;
    }
    const Json params = tool.Schema()["function"]["parameters"];
    for (const auto& [key, value] : checked->items()) {
      // Closed schemas: nothing undeclared survives for anyone to read.
      if (!params["properties"].contains(key)) __builtin_trap();
      if (value.is_null()) __builtin_trap();
      const std::string type = params["properties"][key].value("type", "");
      if (!HasType(value, type)) __builtin_trap();
    }
    for (const Json& r : params.value("required", Json::array())) {
      if (!checked->contains(r.get<std::string>())) __builtin_trap();
    }
    if (name == "bash") {
      absl::StatusOr<tools::BashRequest> request = tools::ReadBashRequest(*checked);
      if (!request.ok()) __builtin_trap();
      // The policy's escalation test is this very field; it must be what the JSON holds.
      const bool in_json = checked->contains("escalate") && (*checked)["escalate"].get<bool>();
      if (request->escalate != in_json) __builtin_trap();
      if (request->command != (*checked)["command"].get<std::string>()) __builtin_trap();
    }
  }
  return 0;
}
