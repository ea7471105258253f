// The system message of a session: the prose of system_prompt.txt (or the user's own file,
// config "system_prompt_file") with the environment facts filled in, the user's addition
// ("system_prompt_append"), then the project's instruction files. Every byte is sent with
// every request: keep the prose compact. Thread-safe (no shared state).
#pragma once

#include <string>

#include "absl/time/time.h"
#include "daemon/context/context_config.h"
#include "daemon/context/instructions.h"

namespace agent::daemon {

struct SystemPromptInputs {
  std::string project_root;  // the session's workdir
  std::string cwd;           // where the user started it; empty: project_root
  absl::Time now;
  context::ContextConfig config;
  std::string global_instructions;  // $XDG_CONFIG_HOME/agent/AGENTS.md
};

struct BuiltSystemPrompt {
  std::string text;
  size_t base_chars = 0;  // of `text` before the instructions
  context::Instructions instructions;
  std::string problem;  // a system_prompt_file that could not be read, for a Notice
};

BuiltSystemPrompt BuildSystemPrompt(const SystemPromptInputs& inputs);

// The same for a session of `workdir`: reads the config, the files, the clock.
BuiltSystemPrompt BuildSystemPromptFor(const std::string& workdir, const std::string& cwd,
                                       absl::Time now);

// The built-in prose with `{environment}` filled in.
std::string BuiltinPrompt(const std::string& environment);

}  // namespace agent::daemon
