#include "client/input/remote_completion.h"

namespace agent::client {

Completion RemoteComplete(std::string_view before, const CompletionSources& sources) {
  // Only "/name" alone on the line names a command; anything else would read local files.
  if (before.empty() || before[0] != '/' ||
      before.find_first_of(" \t\n@") != std::string_view::npos) {
    return {};
  }
  CompletionSources commands_only;
  commands_only.custom_commands = sources.custom_commands;
  return Complete(before, commands_only);
}

}  // namespace agent::client
