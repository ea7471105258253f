// The client's side of custom slash commands and @mentions: the commands come from the
// daemon (ListCommands), which also expands them (SendPromptRequest.expand), so this only
// lists them in /help, lets a typed `/name` of one through as a prompt instead of refusing
// it as unknown, shows the warnings of an expansion, and shows a user message as typed
// (without the files its mentions attached). Not thread-safe; the view's thread only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/v1/agent.grpc.pb.h"
#include "client/input/slash_commands.h"
#include "client/link/event_stream.h"

namespace agent::client {

// The commands the daemon sees for the project `workdir`, in effect first; empty when the
// call fails (an older daemon answers UNIMPLEMENTED).
std::vector<agent::v1::CustomCommand> FetchCustomCommands(agent::v1::AgentDaemon::Stub& stub,
                                                          const std::string& workdir);

// True when `c` is no built-in and the daemon knows a command named so.
bool IsCustomCommand(agent::v1::AgentDaemon::Stub& stub, const std::string& workdir,
                     const SlashCommand& c);

// /help lines for `commands` (ListCommands' order: the one in effect first): usage, the
// description and where it comes from; a command hidden by a built-in or by a project command
// of the same name says so. Control characters are left out. Pure.
std::string CustomCommandsHelp(const std::vector<agent::v1::CustomCommand>& commands);

// The warnings of an expanded prompt: as notices through `mailbox`, or on stderr.
void ShowPromptWarnings(const agent::v1::SendPromptResponse& resp, Mailbox& mailbox,
                        bool to_stderr);

// A transcript's user message as the person typed it: the files its @mentions attached
// (daemon/prompt/mentions.h, "\n\n<mention path=") cut off.
std::string TypedPart(std::string_view user_message);

}  // namespace agent::client
