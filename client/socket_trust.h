// What the client checks before it sends anything to a socket (DESIGN.md "Trust boundaries"):
// the API key travels in CreateSession and SendPrompt, so another local user must not be able
// to stand in for agentd. The socket's directory must be a real directory (not a symlink)
// owned by us and not writable by group or others, so nobody else can place or replace the
// socket; and the process listening on it must run as us or as root (SO_PEERCRED). Errors are
// one line naming the path and the owner. Pure functions of the filesystem; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace agent::client {

// PermissionDenied unless `dir` (lstat, no symlink followed) is a directory owned by this
// process's uid with no group/other write bit; NotFound when it does not exist.
absl::Status CheckSocketDir(const std::string& dir);

// For starting agentd: creates `dir` with mode 0700 when missing (its parents too), then
// CheckSocketDir. A directory that exists with the wrong owner or mode is refused, never fixed.
absl::Status EnsureSocketDir(const std::string& dir);

// PermissionDenied unless the peer of the connected Unix socket `fd` (the process that called
// listen) runs as this process's uid or as root. `path` is for the message.
absl::Status CheckSocketPeer(int fd, const std::string& path);

// "65534 (nobody)": a uid with its user name when there is one.
std::string UidName(unsigned uid);

}  // namespace agent::client
