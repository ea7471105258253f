// What `agent "prompt"`, `agent attach` and the interactive `agent` do with a session: create
// or continue it, then run the session view (session_view.h). Decides nothing about agent
// behaviour: it renders events and forwards prompts, approvals and cancels.
#pragma once

#include <string>

#include "client/commands/session_calls.h"
#include "client/link/connection.h"

namespace agent::client {

// Creates (or resumes) a session in the current directory, sends `prompt`, streams the turn
// and returns its exit code.
int RunOneShot(const Connection& daemon, const ClientOptions& options, const std::string& prompt);

// Interactive: history, then prompts read with line editing until Ctrl-D detaches.
// With an empty session_id a new session is created.
int RunInteractive(const Connection& daemon, const ClientOptions& options);

}  // namespace agent::client
