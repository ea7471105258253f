// How a session comes to be: made new, loaded from its files, or forked from another. What that
// needs of the disk and of git (the session's lock file, its transcript and meta file, the
// system prompt's instruction files and git state, the config's prices) is read here, before
// the session exists: none of it runs under a session's mutex. The session manager calls these
// on its disk workers, never on a gRPC callback thread.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "daemon/prompt/system_prompt.h"
#include "daemon/session/session.h"

namespace agent::daemon {

// A new session in `workdir` with the system prompt (a child's: its agent's, from `settings`);
// saved before it returns, else Unavailable naming the directory. Until the model starts
// answering it, it is discarded (its files deleted, later commands NotFound) as soon as it is
// idle with no client attached: a failed or empty one-shot leaves no file and no `agent ls`
// row, while a client waiting at its prompt keeps it.
absl::StatusOr<std::shared_ptr<Session>> CreateSession(const std::string& workdir,
                                                       SessionSettings settings, std::string title,
                                                       SessionDeps deps);
// Loads a saved session and seals calls a crash left unanswered. DataLoss/InvalidArgument name
// the file and the problem; FailedPrecondition when another daemon owns it.
absl::StatusOr<std::shared_ptr<Session>> LoadSession(const std::string& workdir,
                                                     const std::string& id,
                                                     SessionSettings settings, SessionDeps deps);
// A copy of `source`'s transcript (its first `at_message` messages, 0 = all) under a new id.
absl::StatusOr<std::shared_ptr<Session>> ForkSession(Session& source, int at_message,
                                                     SessionDeps deps);

// The system message for a session started in `cwd` (empty: the workdir). Reads the config,
// the instruction files and the git state.
BuiltSystemPrompt BuildSessionPrompt(const std::string& workdir, const std::string& cwd,
                                     const Clock& clock);
// Records that the clients are shown `prompt`'s instruction files; true when they are new or
// changed since last shown. Writes a state file.
bool MarkInstructionsSeen(const std::string& workdir, const BuiltSystemPrompt& prompt);

}  // namespace agent::daemon
