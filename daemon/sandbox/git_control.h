// What git reads as configuration or runs as a hook, inside a work tree the sandbox may write:
// every entry named `.git` (the work tree's own repository, a linked work tree's or a
// submodule's `.git` file, a repository nested anywhere below), the directory a `.git` file
// names, a bare repository's layout (a directory holding `HEAD`, `objects/` and `refs/`, which
// git in that directory takes for a repository), and what a repository's or the user's git
// configuration names in the work tree: `core.hooksPath` (husky's `.husky/`) and the files
// `include.path` / `includeIf.*.path` pull in. The sandbox binds all of them read-only
// (bwrap_argv.h), so a confined command can change none of git's configuration, hooks, `commondir`,
// `config.worktree`, submodule or linked-work-tree directories; and a `.git` a confined command
// made anew is set aside after it ended (SetAsideNewGitEntries), before any git, the person's or
// the daemon's, can read it.
//
// Reads the filesystem (never follows symlinks while walking; a `.git` file is read as a
// regular file of at most 4 KiB, never through a symlink or from a FIFO); thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace agent::daemon::sandbox {

// Entries visited at most by one walk of a work tree; beyond it the walk stops, and what it
// found is what is protected (`complete` says so).
inline constexpr size_t kMaxGitWalkEntries = 400000;

// Which file an entry is: its device and inode, and for a symlink (which is never bound, and
// whose replacement may reuse a freed inode number) the time it was made.
struct FileId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int64_t made_ns = 0;
  bool operator==(const FileId&) const = default;
};

struct GitEntries {
  std::vector<std::string> paths;  // absolute, sorted: every `.git` below the work tree
  // The file each is (its inode, and for a symlink when it was made), in the order of `paths`:
  // a `.git` replaced under the same name is new.
  std::vector<FileId> ids;
  // False when the walk stopped at its bound or met a directory it could not read: a `.git`
  // there was neither protected nor will be set aside, and the caller says so.
  bool complete = true;
};

// Every entry named `.git` under `workdir` (itself included), not descending into one, and
// the `HEAD` of every bare repository's layout (`<dir>/HEAD`; the work tree itself too).
GitEntries FindGitEntries(const std::string& workdir, size_t max_entries = kMaxGitWalkEntries);

// The paths to bind read-only for `entries` of the work tree `workdir`: each `.git`, the
// directory a `.git` file names (`gitdir: …`, relative to the file) and that directory's
// `commondir`; a bare layout's directory (not the work tree itself); and the hooks directory
// and included files the repositories' configuration and `user_configs` (the user's own git
// configuration files) name, when they are in the work tree.
std::vector<std::string> GitControlPaths(const GitEntries& entries, const std::string& workdir,
                                         const std::vector<std::string>& user_configs);

// ~/.gitconfig and $XDG_CONFIG_HOME/git/config (or ~/.config/git/config), for `home`.
std::vector<std::string> UserGitConfigs(const std::string& home);

struct SetAside {
  std::vector<std::string> moved;   // relative to the work tree
  std::vector<std::string> failed;  // could not be renamed: the person is warned
  bool incomplete = false;          // the walk did not see the whole tree
};

// After a confined command: every `.git` (or bare layout's `HEAD`) under `workdir` that is not
// in `before` (by path and by file) is renamed to `<name>.made-in-sandbox-<random>` beside it,
// through its directory opened without following a symlink, so git no longer finds it.
SetAside SetAsideNewGitEntries(const std::string& workdir, const GitEntries& before);

// The line that tells the model (and the person) what was set aside, what could not be, and
// whether the walk saw the whole tree; empty when there is nothing to say.
std::string SetAsideNote(const SetAside& set_aside);

}  // namespace agent::daemon::sandbox
