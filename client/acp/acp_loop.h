// `agent acp`: the Agent Client Protocol on stdin/stdout for an editor (Zed, Neovim, ...).
// A client of the daemon like `agent`: it connects (starting agentd when none answers),
// carries this process's model settings and tool environment, and attaches to sessions the
// terminals see too. One thread polls stdin and every open session's event mailbox and
// handles each in turn (acp_agent.h); the event streams read on their own threads
// (event_stream.h). Stdout carries protocol messages only: anything else this process
// would print goes to stderr.
#pragma once

namespace agent::client {

// True for argv[1] == "acp".
bool IsAcpCommand(const char* word);

// Runs until the editor closes stdin (the sessions go on in the daemon); the exit code.
int RunAcp(int argc, char** argv);

}  // namespace agent::client
