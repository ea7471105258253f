// `agent steer [ID] TEXT`: sends TEXT to the session's running turn (PromptDelivery STEER):
// the model reads it at its next step, and every attached client sees it land. With no turn
// running it is sent as a prompt instead, and the command says so. For scripts and a second
// terminal: `agent steer "use the v2 API instead"`. A daemon of an older protocol, which would
// queue it without a word, is refused.
#pragma once

namespace agent::client {

// argv[1] is "steer". Returns the exit code.
int RunSteerSubcommand(int argc, char** argv);

}  // namespace agent::client
