// Facts about the session's machine and project that the model would otherwise spend tool
// calls discovering: directories, OS, shell, date, and the git state.
//
// The git state never runs the repository's code: the branch comes from reading .git/HEAD,
// and the count of changed files from git commands that read no file's content
// (git_changes.h), so no filter, textconv, hook or submodule of the repository runs.
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "absl/time/time.h"

namespace agent::daemon::context {

struct GitFacts {
  bool is_repo = false;
  std::string branch;      // "main", or "detached at 1a2b3c4"
  int changed_files = -1;  // -1: not counted
};

// The git state of the work tree that contains `dir` (searched upwards to `/`).
GitFacts ReadGitFacts(const std::string& dir, bool count_changes = true);

struct EnvironmentFacts {
  std::string cwd;
  std::string project_root;
  std::string os;     // "Linux 6.1.0"
  std::string shell;  // what bash runs as
  std::string date;   // YYYY-MM-DD, local time
  GitFacts git;
};

EnvironmentFacts CollectEnvironment(const std::string& project_root, const std::string& cwd,
                                    absl::Time now);

// The facts as the lines of the system prompt's environment section.
std::string RenderEnvironment(const EnvironmentFacts& facts);

}  // namespace agent::daemon::context
