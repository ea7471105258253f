// The interactive client's slash commands: what a typed line means. Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agent::client {

struct SlashCommand {
  enum Kind {
    kHelp,
    kCompact,
    kClear,
    kDetach,
    kSessions,
    kModel,
    kAllow,
    kFork,
    kStatus,
    kContext,
    kUndo,
    kRewind,
    kDiff,
    kTrust,
    kMode,
    kMcp,
    kLast,
    kUnknown
  } kind;
  std::string argument;  // the rest of the line, trimmed
  std::string name;      // as typed, for kUnknown
};

// The command a line asks for; nullopt when the line is a prompt. A line is a command when
// it starts with "/" and its first word has no other "/" (so "/etc/hosts: what is it?" is a
// prompt). "//text" is the prompt "/text".
std::optional<SlashCommand> ParseSlashCommand(const std::string& line);

// "/model" with no name, "/allow" with no rule: what is missing, or "" when complete.
std::string MissingArgument(const SlashCommand& c);

// The built-in commands a person would type (no aliases): name without the slash, and what
// it does.
std::vector<std::pair<std::string, std::string>> SlashCommandList();

// The /help text, one command a line.
std::string SlashHelp();

}  // namespace agent::client
