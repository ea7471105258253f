#include "daemon/system_prompt.h"

namespace agent::daemon {

std::string SystemPrompt(const std::string& workdir) {
  return "You are a coding agent working in the project at " + workdir +
         ". Use the tools to inspect and change files and to run commands; paths are "
         "relative to the project. Read a file before editing it. Keep answers short and say "
         "what you changed.";
}

}  // namespace agent::daemon
