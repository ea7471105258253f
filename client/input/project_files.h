// The files of a project, for `@path` completion: what git would show (tracked and untracked,
// .gitignore honoured), else a walk of the tree. Repository files are untrusted: git runs
// with core.fsmonitor off (the one setting that makes `ls-files` run a program), no pager,
// no prompt, and no GIT_* variable of ours that could point it elsewhere. Both ways are
// bounded in time and in count. Thread-compatible; the functions keep no state.
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace agent::client {

struct ProjectFilesLimits {
  size_t max_files = 20000;
  absl::Duration timeout = absl::Seconds(2);
  int max_depth = 16;  // the walk only
};

// Paths relative to `dir` ('/'-separated, no "./"), sorted, at most `max_files`; never those
// under .git/ or .agent/sessions/. Empty when `dir` cannot be read.
std::vector<std::string> ListProjectFiles(const std::string& dir, const ProjectFilesLimits& l = {});

// The two ways, for tests. GitLsFiles: false when git is missing, fails, or runs out of time
// (`out` is then untouched).
bool GitLsFiles(const std::string& dir, const ProjectFilesLimits& l, std::vector<std::string>* out);
std::vector<std::string> WalkProjectFiles(const std::string& dir, const ProjectFilesLimits& l);

}  // namespace agent::client
