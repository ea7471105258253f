// The config.json keys of this folder ($XDG_CONFIG_HOME/agent/config.json), read when a
// session is created, so an edit applies to the next session without restarting the daemon:
//   "instruction_fallbacks": ["CLAUDE.md"]   names tried after AGENTS.override.md, AGENTS.md
//   "instruction_max_bytes": 32768           total cap over the instruction files
//   "system_prompt_append": "text"           added to the end of the built-in prompt
//   "system_prompt_file": "/path"            replaces the built-in prompt (relative: to the
//                                            config directory)
//   "prices": {"MODEL": {"input", "output", "cached_input", "cache_write"}}   USD per million
//   tokens
// A malformed value is reported in `problem` and the default kept: a session still starts.
// Thread-safe (no shared state).
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "daemon/context/usage.h"

namespace agent::daemon::context {

struct ContextConfig {
  std::vector<std::string> instruction_fallbacks = {"CLAUDE.md"};
  int64_t instruction_max_bytes = 32 * 1024;
  std::string system_prompt_append;
  std::string system_prompt_file;  // absolute once loaded
  PriceTable prices;
  std::string problem;  // what was wrong with the file, for a Notice; empty when fine
};

ContextConfig ContextConfigFromJson(const Json& j, const std::string& config_dir);
// Reads ConfigDir()/config.json; defaults when it is missing.
ContextConfig LoadContextConfig();

}  // namespace agent::daemon::context
