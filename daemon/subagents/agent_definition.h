// Agent definitions: what a child session made by the `task` tool runs. Markdown files in
// `<project>/.agent/agents/NAME.md` (project) and `$XDG_CONFIG_HOME/agent/agents/NAME.md`
// (user), with a front matter:
//
//   ---
//   name: reviewer                      (optional: the file's name; [a-z0-9_-]{1,64})
//   description: Reviews a diff          (one line, shown in the task tool's description)
//   tools: read_file, search, list_dir   (allow-list; absent: every tool but `task`)
//   model: gpt-4o-mini                   (optional: the parent's model otherwise)
//   ---
//   The body: the child's system prompt (the environment facts are added after it).
//
// Trust: project files are repository content. They are read without following symlinks,
// capped in size and number, and can only narrow what a child may do: any other key (a
// mode, rules, a policy) is ignored; the mode and rules are always the parent's. A built-in
// `general` agent exists unless a file of that name replaces its prompt. A project file
// shadows a user file of the same name. Pure functions over the filesystem; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::daemon::subagents {

inline constexpr size_t kMaxAgentFileBytes = 64 << 10;
inline constexpr size_t kMaxAgentNameBytes = 64;
inline constexpr size_t kMaxAgentDescriptionBytes = 200;
inline constexpr size_t kMaxAgentTools = 64;
inline constexpr size_t kMaxAgentsPerDir = 32;
inline constexpr std::string_view kGeneralAgent = "general";

struct AgentDefinition {
  std::string name;
  std::string description;
  // The tools the child may use; `all_tools` when the file gave no list.
  bool all_tools = true;
  std::vector<std::string> tools;
  std::string model;   // empty: the parent's
  std::string prompt;  // the body; empty for the built-in general agent (the usual prompt)
  std::string scope;   // "project", "user" or "builtin"
  std::string path;    // the file, for messages
};

// [a-z0-9_-]{1,64}.
bool IsValidAgentName(std::string_view name);

// Parses one file's text. `file_stem` names it when the front matter has no `name`.
// InvalidArgument (naming the problem) for a missing or unclosed front matter, a bad name,
// tool or model, too many tools, or an empty body.
absl::StatusOr<AgentDefinition> ParseAgentDefinition(std::string_view text,
                                                     std::string_view file_stem);

// The definitions in effect for `project`: the project's (sorted by name), then the user's
// in `user_dir` not shadowed, then the built-in general agent unless shadowed. Broken,
// oversized, symlinked (in the project) files are left out; `problems`, when given, gets one
// line for each.
std::vector<AgentDefinition> ListAgents(const std::string& project, const std::string& user_dir,
                                        std::vector<std::string>* problems = nullptr);

// The definition `name` in effect (see ListAgents); NotFound listing the available names.
absl::StatusOr<AgentDefinition> FindAgent(const std::string& project, const std::string& user_dir,
                                          std::string_view name);

// Whether a child running `def` at `depth` (1 for a direct child) is offered `tool`. `task`
// needs both the definition's explicit listing and depth < max_depth.
bool AgentMayUse(const AgentDefinition& def, std::string_view tool, int depth, int max_depth);

// `$XDG_CONFIG_HOME/agent/agents`.
std::string UserAgentsDir();

}  // namespace agent::daemon::subagents
