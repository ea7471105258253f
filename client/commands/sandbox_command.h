// `agent sandbox [--network] [--timeout S] -- CMD ARGS…`: runs one command exactly as the bash
// tool would (the daemon's sandbox, this project, this terminal's filtered environment) and
// exits with its status (128+N for a signal); its output goes to stdout. `agent sandbox
// --check`: what the sandbox confines here, or exactly why it cannot start and how to fix it;
// exits 0 only when commands run confined. A command is never run unconfined.
#pragma once

namespace agent::client {

// argv[0] is "sandbox". Returns the exit code.
int SandboxCommand(int argc, char** argv);

}  // namespace agent::client
