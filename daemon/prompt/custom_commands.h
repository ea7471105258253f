// Custom slash commands: Markdown files in `<project>/.agent/commands/NAME.md` (project) and
// `$XDG_CONFIG_HOME/agent/commands/NAME.md` (user) become `/NAME`. The file's body is the
// prompt; `$ARGUMENTS` is replaced by what follows the name, `$1`…`$9` by its words. An
// optional front matter (`---` lines) may give `description:`, shown in /help and completion.
//
// Rules: names are [a-z0-9_-], at most 64 bytes; files are at most kMaxCommandFileBytes; a
// project command shadows a user one of the same name; a built-in command's name (/help,
// /status, …) is never expanded, whichever file defines it. Project files are repository
// content: they are read without following symlinks (`.agent/`, `commands/` and the file),
// and a description is one line without control characters. Pure functions over the
// filesystem; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon {

inline constexpr size_t kMaxCommandFileBytes = 64 << 10;
inline constexpr size_t kMaxCommandNameBytes = 64;
inline constexpr size_t kMaxDescriptionBytes = 200;

struct CustomCommandFile {
  std::string name;
  std::string description;
  std::string scope;  // "project" or "user"
  std::string path;
  std::string body;  // without the front matter
};

// [a-z0-9_-]{1,64}.
bool IsValidCommandName(std::string_view name);
// The client's built-in commands and those the daemon reserves for them.
bool IsBuiltinCommandName(std::string_view name);

// Splits a command file into its front matter's description and its body. A file without a
// closed front matter is all body.
struct ParsedCommand {
  std::string description;
  std::string body;
};
ParsedCommand ParseCommandFile(std::string_view text);

// `body` with `$ARGUMENTS` replaced by `arguments` (trimmed) and `$1`…`$9` by its words
// (double or single quotes keep spaces inside one word; a missing word is empty). One pass:
// text that comes in through the arguments is not expanded again. A body that uses no
// placeholder gets non-empty arguments appended after a blank line.
std::string SubstituteArguments(std::string_view body, std::string_view arguments);

// The commands visible from `project` (absolute): the project's, sorted by name, then the
// user's in `user_dir`. A name in both is listed twice, the project's (the one in effect)
// first. Files with an invalid or built-in name, too large, unreadable or (in the project)
// symlinked are left out.
std::vector<CustomCommandFile> ListCustomCommands(const std::string& project,
                                                  const std::string& user_dir);

// The command `name` in effect for `project`: the project's, else the user's; nullopt when
// there is none, or when `name` is invalid or built in. InvalidArgument naming the file when
// the file exists but is too large, not a regular file or (in the project) a symlink.
absl::StatusOr<std::optional<CustomCommandFile>> FindCustomCommand(const std::string& project,
                                                                   const std::string& user_dir,
                                                                   std::string_view name);

// When `text` starts with `/NAME` (then the end or whitespace) of a command in effect, its
// body with the rest of the text as the arguments; nullopt when it does not. `warning` is set
// when a command file exists but cannot be used (the text is then taken as typed).
std::optional<std::string> ExpandCustomCommand(const std::string& project,
                                               const std::string& user_dir, std::string_view text,
                                               std::string* warning);

// `$XDG_CONFIG_HOME/agent/commands`: the user's commands.
std::string UserCommandsDir();

}  // namespace agent::daemon
