// Runs the `git` program on the checkpoint store: our own GIT_DIR, index and work tree, and
// nothing of the user's git set-up. The environment is built from scratch (no GIT_* of the
// daemon's, no system or global config, no HOME config); every call passes -c settings that
// stop git from running anything the project could name: hooks, fsmonitor, and (our config
// has no filter or textconv driver) attribute filters. argv is exec'd directly, no shell, by
// the process seam (daemon/base/process_runner.h). Stateless; thread-safe; blocks its calling
// thread.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/base/process_runner.h"

namespace agent::daemon::checkpoints {

struct GitCall {
  std::string git_dir;            // the shadow store (GIT_DIR, its index GIT_DIR/index)
  std::string work_tree;          // the project; also the child's cwd
  std::vector<std::string> args;  // after `git -c ...`
  std::string input;              // written to stdin
};

// stdout of a call that exited 0; Internal naming the command and its stderr otherwise.
// NotFound when git is not installed.
absl::StatusOr<std::string> RunGit(const GitCall& call,
                                   const ProcessRunner& runner = RealProcessRunner());

// The environment every call gets (for tests).
std::vector<std::string> GitEnvironment(const std::string& git_dir, const std::string& work_tree);

}  // namespace agent::daemon::checkpoints
