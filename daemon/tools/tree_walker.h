// Walks a directory tree inside the workdir the way the search tools see it: `.git` and
// `.agent` are skipped at any depth, .gitignore files are honoured (those of the workdir and
// of every directory down to the start as well as those met on the way), symlinked
// directories are not entered (no cycles, no escapes). Entries come in a stable order
// (depth first, names sorted bytewise). Thread-compatible; independent walks may run at once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace agent::daemon::tools {

// Directory names no tool lists or searches.
bool IsSkippedDirName(std::string_view name);

struct WalkEntry {
  std::string rel_path;  // relative to the workdir
  std::string abs_path;
  bool is_symlink = false;  // a symlink to a regular file
};

struct WalkStats {
  size_t entries_seen = 0;
  bool truncated = false;  // stopped at max_entries
};

struct WalkOptions {
  bool honour_gitignore = true;
  // Directory entries looked at before giving up, to bound the work in huge trees.
  size_t max_entries = 200'000;
};

// Calls `visit` for every regular file (or symlink to one) under `start_abs`, which must be
// a directory inside `workdir` (both canonical). `visit` returns false to stop. Unreadable
// directories are skipped. kNotFound / kFailedPrecondition when start_abs is not a directory.
absl::Status WalkFiles(const std::string& workdir, const std::string& start_abs,
                       const WalkOptions& options,
                       const std::function<bool(const WalkEntry&)>& visit, WalkStats* stats);

}  // namespace agent::daemon::tools
