// The system prompt every new session starts with. Kept short: every byte is sent with
// every request.
#pragma once

#include <string>

namespace agent::daemon {

std::string SystemPrompt(const std::string& workdir);

}  // namespace agent::daemon
