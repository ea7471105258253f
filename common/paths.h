// Where things live: the daemon's socket, its state and the user's config (XDG base dirs).
// Pure functions of the environment; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace agent {

// $AGENT_SOCKET, else $XDG_RUNTIME_DIR/agent/agentd.sock, else /tmp/agent-$UID/agentd.sock.
std::string SocketPath();
// $XDG_STATE_HOME/agent (default ~/.local/state/agent): the project registry and daemon log.
std::string StateDir();
// $XDG_CONFIG_HOME/agent (default ~/.config/agent): config.json.
std::string ConfigDir();
// <project>/.agent/settings.json: the project's permission rules.
std::string ProjectSettingsPath(const std::string& project);

// Creates `dir` (and parents) with mode 0700 and checks that it is a directory owned by us
// and not accessible by others; PermissionDenied otherwise, so a socket is never placed
// where another user could reach or replace it.
absl::Status EnsurePrivateDir(const std::string& dir);

// Absolute, lexically normal form of `path` (relative to the current directory).
std::string AbsolutePath(const std::string& path);

// A project directory a client named (CreateSession, ListMcpServers, TrustProjectRules) as the
// daemon keys it: canonical (symlinks resolved). InvalidArgument for a relative path (the
// daemon's own working directory means nothing to a client) or one that is not a directory.
absl::StatusOr<std::string> ProjectDirectory(const std::string& workdir);

// Where a session's tools run: `cwd` resolved (symlinks too) when it is an existing directory
// inside the directory `root` (canonical) or `root` itself, else `root`. Relative or empty
// `cwd`: `root`. A repository's files name no directory outside the project this way.
std::string DirectoryInside(const std::string& root, const std::string& cwd);

}  // namespace agent
