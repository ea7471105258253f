// Remembers, outside the repository ($XDG_STATE_HOME/agent/instructions_seen.json), which
// instruction files (by path and content) a project has used, so the user is shown them when
// they are first used and again when they change. Thread-safe (a process-wide mutex around
// the read-modify-write of the file).
#pragma once

#include <string>

#include "daemon/context/instructions.h"

namespace agent::daemon::context {

// Records the files of `instructions` for `project`; true when any of them (or its content)
// had not been seen before. Failing to read or write the record counts as "not seen": the
// user is told once too often rather than never.
bool MarkInstructionsSeen(const std::string& state_file, const std::string& project,
                          const Instructions& instructions);

}  // namespace agent::daemon::context
