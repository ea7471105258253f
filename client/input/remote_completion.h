// Tab completion for a session on another host (`agent --host`): the project's files are
// HOST's, so nothing is completed from this machine's file system (no @path, no path
// arguments); slash command names still complete (built-ins and the daemon's ListCommands).
// Pure but for the sources' calls; thread-compatible.
#pragma once

#include <string_view>

#include "client/input/completion.h"

namespace agent::client {

Completion RemoteComplete(std::string_view before, const CompletionSources& sources);

}  // namespace agent::client
