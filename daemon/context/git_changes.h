// How many files of a work tree are changed, staged or untracked, counted so that the
// repository cannot make git run a program: a cloned repository chooses its own config
// (.git/config, config.worktree, included files, a submodule's config) and .gitattributes,
// and a clean filter or textconv named there runs whenever git reads a file's content.
//
// So no command used reads a tracked file's content: `diff-index --cached` compares the index
// with HEAD, `diff-files` compares stat data only (against a private copy of the index, see
// git_changes.cc), `ls-files --others` lists untracked names; submodules are never entered.
// Hooks and fsmonitor are off, system and global config are not read, no lock is taken. The
// commands run through the process seam (daemon/base/process_runner.h).
// A file whose timestamps changed but whose content did not counts as changed (only a
// content read could tell). Thread-safe (no shared state).
#pragma once

#include <string>

#include "daemon/base/process_runner.h"

namespace agent::daemon::context {

// The count for the work tree `top` whose git directory is `git_dir` (where `.git` is or
// points to); -1 when it cannot be counted (git missing or failing, the index unreadable or
// over 64 MiB, over 2 s, or too many names to list).
int CountChangedFiles(const std::string& top, const std::string& git_dir,
                      const ProcessRunner& runner = RealProcessRunner());

}  // namespace agent::daemon::context
