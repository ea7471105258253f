// The one-line warning when a session's project directory is the user's home or "/": the
// agent's tools reach everything under the project, which there is everything. Pure.
#pragma once

#include <string>

namespace agent::client {

// "the agent can read and change everything under /home/me (your home directory)" when
// `workdir` is `home` or "/" (compared after resolving symlinks and "..", as far as they
// exist), else "". An empty `home` matches nothing.
std::string WideWorkdirWarning(const std::string& workdir, const std::string& home);

}  // namespace agent::client
