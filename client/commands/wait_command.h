// `agent wait [ID] [--for approval|idle]`: blocks until the session (default: the newest here)
// needs a person (an approval waits, its own or a child's) or its turn has ended (it is idle),
// then prints which, `approval` or `idle`, and exits 0. For scripts, status bars and phone
// notifiers: `agent wait --for approval && notify-send …`. A session idle or waiting already
// answers at once. It watches as a read-only client: it can neither prompt nor answer.
#pragma once

namespace agent::client {

// argv[1] is "wait". Returns the exit code.
int RunWaitSubcommand(int argc, char** argv);

}  // namespace agent::client
