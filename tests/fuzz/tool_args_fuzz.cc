// Fuzzes tool-argument parsing: whatever the model sends as `arguments`, parsing returns a
// JSON object or a clear error, and the field helpers never crash on what it returns.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "daemon/tools/tool_args.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  auto args = agent::daemon::tools::ParseToolArguments(raw);
  if (!args.ok()) {
    if (args.status().message().empty()) __builtin_trap();  // errors must say what is wrong
    return 0;
  }
  if (!args->is_object()) __builtin_trap();
  for (const char* field : {"path", "command", "pattern", "old_string", "content"}) {
    (void)agent::daemon::tools::RequireString(*args, field);
  }
  return 0;
}
