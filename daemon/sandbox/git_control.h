// What git reads as configuration or runs as a hook, inside a work tree the sandbox may write:
// every entry named `.git` (the work tree's own repository, a linked work tree's or a
// submodule's `.git` file, a repository nested anywhere below), and the directory a `.git`
// file names. The sandbox binds all of them read-only (bwrap_argv.h), so a confined command
// can change none of git's configuration, hooks, `commondir`, `config.worktree`, submodule
// or linked-work-tree directories; and a `.git` a confined command made anew is set aside
// after it ended (SetAsideNewGitEntries), before any git, the person's or the daemon's, can
// read it.
//
// Reads the filesystem (never follows symlinks while walking); thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace agent::daemon::sandbox {

// Entries visited at most by one walk of a work tree; beyond it the walk stops, and what it
// found is what is protected (`complete` says so).
inline constexpr size_t kMaxGitWalkEntries = 400000;

struct GitEntries {
  std::vector<std::string> paths;  // absolute, sorted: every `.git` below the work tree
  bool complete = true;
};

// Every entry named `.git` under `workdir` (itself included), not descending into one.
GitEntries FindGitEntries(const std::string& workdir, size_t max_entries = kMaxGitWalkEntries);

// The paths to bind read-only for `entries`: each entry, and for a `.git` file the directory
// it names (`gitdir: …`, relative to the file) and that directory's `commondir`.
std::vector<std::string> GitControlPaths(const GitEntries& entries);

// After a confined command: every `.git` under `workdir` that is not in `before` is renamed
// to `.git.made-in-sandbox` (a free name beside it), so git no longer finds it. Returns the
// paths set aside, relative to `workdir`, for the model and the person to be told.
std::vector<std::string> SetAsideNewGitEntries(const std::string& workdir,
                                               const GitEntries& before);

// The line that tells the model what was set aside and why; empty for none.
std::string SetAsideNote(const std::vector<std::string>& set_aside);

}  // namespace agent::daemon::sandbox
