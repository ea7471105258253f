// Which project a command in a directory belongs to: the nearest enclosing directory that
// holds a `.agent/` or a `.git` (the git work tree's top; git itself is not run), else the
// directory itself. So `agent` run in `src/` of a repository finds that repository's
// sessions, while its tools still run where the user is. Thread-safe (reads the file system).
#pragma once

#include <string>

namespace agent::client {

struct ProjectDirs {
  std::string root;  // the project: sessions are listed, created and continued here
  std::string cwd;   // where the command ran: the session's tools start here
};

// The project of `dir` (absolute). Only a marker owned by this user counts, and never a
// symlink: a `.agent/` another user planted in /tmp must not make /tmp the project (its
// settings.json would grant rules and its sessions/ would receive our transcripts).
ProjectDirs FindProject(const std::string& dir);

// FindProject of the current directory.
ProjectDirs ProjectHere();

}  // namespace agent::client
