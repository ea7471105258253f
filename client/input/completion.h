// Tab completion for the interactive prompt. Pure apart from reading directories for plain
// paths; the lists it completes from are the caller's (CompletionSources), so the view
// decides where custom commands and project files come from.
//   "/he"            slash commands: the built-ins, then the custom ones
//   "… @ren"         fuzzy over the project's files (and their directories, "dir/")
//   "/cmd … src/ma"  plain paths, relative to the working directory, in a command's arguments
// Not thread-safe (the sources' callbacks run on the caller's thread).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace agent::client {

struct CommandCandidate {
  std::string name;  // without the slash
  std::string description;
};

struct CompletionSources {
  // Custom commands (ListCommands); asked each time a command name is completed.
  std::function<std::vector<CommandCandidate>()> custom_commands;
  // The project's files, relative to `cwd`; asked when an "@word" is completed.
  std::function<std::vector<std::string>()> project_files;
  std::string cwd;  // where plain paths are relative to
};

struct Completion {
  size_t erase = 0;                  // bytes before the cursor that `insert` replaces
  std::string insert;                // "" with erase 0: nothing changes
  std::vector<std::string> choices;  // to show when the word stays ambiguous
};

// What Tab does with `before` (the text before the cursor, UTF-8).
Completion Complete(std::string_view before, const CompletionSources& sources);

// The best `limit` of `paths` for the fuzzy `query` (its characters in order, case folded),
// best first: contiguous matches, matches at the start of a name or a path component, and
// shorter paths rank higher. Directories of the files count as candidates ("dir/").
std::vector<std::string> FuzzyMatch(std::string_view query, const std::vector<std::string>& paths,
                                    size_t limit);

// Built-in command names and descriptions (slash_commands.h).
std::vector<CommandCandidate> BuiltinCommands();

}  // namespace agent::client
